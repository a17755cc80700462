import type { AuditLog, Cache, Logger } from '@attest/common';
import type { AppDirectory, ConsentDirectory, SubjectDirectory, UserDirectory } from '../domain/directories';
import type { DpopProofs } from '../domain/dpop';
import type { Grants } from '../domain/grants';
import type { NewPasskey, PasskeyFailure, Passkeys, Ceremony } from '../domain/passkeys';
import type { Revocations } from '../domain/revocations';
import type { BackChannelLogout } from '../domain/backchannel-logout';
import type { ClientKeys } from '../domain/client-keys';
import type { PushedRequests } from '../domain/pushed-requests';
import type { InteractionStore, Sessions } from '../domain/sessions';
import type { SigningKeys } from '../domain/signing-keys';
import type { TokenService } from '../domain/tokens';
import type { IdentityConfig } from '../config';
import type { IdentityLimits } from './failure-limits';
import type { InteractionLimit } from './interaction-limit';

/** Everything a route needs, built once in app.ts. */
export interface IdentityContext {
  config: IdentityConfig;
  logger: Logger;
  cache: Cache;
  apps: AppDirectory;
  users: UserDirectory;
  consents: ConsentDirectory;
  subjects: SubjectDirectory;
  keys: SigningKeys;
  /** Apps' public keys (jwks or jwks_uri): private_key_jwt and signed request objects. */
  clientKeys: ClientKeys;
  /** Pushed authorization requests (RFC 9126), single-use, in the cache. */
  pushedRequests: PushedRequests;
  tokens: TokenService;
  revocations: Revocations;
  grants: Grants;
  /** DPoP (RFC 9449) proofs at /token and /userinfo (and for /par): verification, nonces, replay. */
  dpop: DpopProofs;
  sessions: Sessions;
  backChannelLogout: BackChannelLogout;
  interactions: InteractionStore;
  limits: IdentityLimits;
  /** New sign-in interactions per client address (INTERACTIONS_PER_ADDRESS). */
  interactionLimit: InteractionLimit;
  audit: AuditLog;
  passkeys: Passkeys;
  /** Self sign-up: the new account and its first passkey, in one transaction. */
  createPasskeyAccount(account: NonNullable<Ceremony['account']>, passkey: NewPasskey): Promise<PasskeyFailure | null>;
}
