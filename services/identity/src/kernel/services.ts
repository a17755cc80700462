import type { AuditLog, Cache, Logger } from '@attest/common';
import type { IdentityConfig } from '../config';
import type { AppDirectory, ConsentDirectory, SubjectDirectory, UserDirectory } from './directories';
import type { IdentityLimits } from './failure-limits';
import type { Revocations } from './revocations';
import type { Sessions } from './sessions';
import type { SigningKeys } from './signing-keys';
import type { AppTeams } from './teams';
import type { TokenService } from './tokens';

/**
 * The kernel's shared services, as the composition root (services.ts) builds them once. No route receives
 * this whole: each takes a Pick<> of the few it uses (its own deps type).
 */
export interface KernelServices {
  config: IdentityConfig;
  logger: Logger;
  cache: Cache;
  audit: AuditLog;
  /** Failure limits (credentials, sign-ins, passkeys, sign-ups): used by oauth, signin and account. */
  limits: IdentityLimits;
  apps: AppDirectory;
  users: UserDirectory;
  consents: ConsentDirectory;
  subjects: SubjectDirectory;
  /** App teams (issue 27): who may see or change which app in the portal. */
  teams: AppTeams;
}

/** What is issued and ended: signing keys, tokens, their revocations, browser sessions. */
export interface TokenServices {
  keys: SigningKeys;
  tokens: TokenService;
  revocations: Revocations;
  sessions: Sessions;
}
