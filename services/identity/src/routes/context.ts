import type { Cache, Logger } from '@attest/common';
import type { Grants } from '../domain/grants';
import type { Revocations } from '../domain/revocations';
import type { InteractionStore, SessionStore } from '../domain/sessions';
import type { SigningKeys } from '../domain/signing-keys';
import type { TokenService } from '../domain/tokens';
import type { IdentityConfig } from '../config';
import type { AppStore } from '../store/app-store';
import type { ConsentStore } from '../store/consent-store';
import type { SubjectStore } from '../store/subject-store';
import type { UserStore } from '../store/user-store';

/** Everything a route needs, built once in app.ts. */
export interface IdentityContext {
  config: IdentityConfig;
  logger: Logger;
  cache: Cache;
  apps: AppStore;
  users: UserStore;
  consents: ConsentStore;
  subjects: SubjectStore;
  keys: SigningKeys;
  tokens: TokenService;
  revocations: Revocations;
  grants: Grants;
  sessions: SessionStore;
  interactions: InteractionStore;
}
