import type { AuditActor, AuditLog, Cache, Logger } from '@attest/common';
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
import type { AppTeams } from '../domain/teams';
import type { TransactionsAdmin } from '../portal/transactions-admin';
import type { InsightStore } from '../store/member-store';
import type { User } from '../store/user-store';
import type { IdentityLimits } from './failure-limits';
import type { InteractionLimit } from './interaction-limit';

/**
 * What runs after an operator created a user through the admin API (POST /admin/users), before the answer
 * is sent: the user, the operator (the actor of the audit events it records) and the app teams. pnpm start
 * makes its demo app's first owner with it (apps/demo/src/demo-owner.ts).
 */
export type OperatorCreatedUserHook = (
  created: { user: User; operator: AuditActor },
  teams: Pick<AppTeams, 'list' | 'put'>,
) => Promise<void>;

/** Everything a route needs, built once in app.ts. */
export interface IdentityContext {
  /** App teams (issue 27): who may see or change which app in the portal. */
  teams: AppTeams;
  /** Sign-in insight per app, from the audit trail (counts only). */
  insight: InsightStore;
  /** The developer portal's own client id (an app of this provider). */
  portalClientId: string;
  /** The transactions service's admin API: the portal's API keys page. */
  transactionsAdmin: TransactionsAdmin;
  /** How the portal reaches its own /token (tests route it to the app under test). */
  portalFetch: typeof fetch;
  /** Runs after an operator creates a user through the admin API (never on self sign-up): see ContextOptions. */
  onOperatorCreatedUser?: OperatorCreatedUserHook;
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
