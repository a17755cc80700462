import type { AuditLog, Cache, Logger } from '@attest/common';
import type { IdentityConfig } from '../config';
import type { AppDirectory, SubjectDirectory, UserDirectory } from '../kernel/directories';
import type { InsightStore } from '../kernel/member-store';
import type { SigningKeys } from '../kernel/signing-keys';
import type { AppTeams } from '../kernel/teams';
import type { TransactionsAdmin } from './transactions-admin';

/** What the portal itself owns, built once in app.ts (portalServices). */
export interface PortalServices {
  /** The developer portal's own client id (an app of this provider). */
  clientId: string;
  /** How the portal reaches its own /token (tests route it to the app under test). */
  fetch: typeof fetch;
  /** The transactions service's admin API: an app's API keys, webhooks and payments. */
  transactionsAdmin: TransactionsAdmin;
  /** Sign-in insight per app, from the audit trail (counts only). */
  insight: InsightStore;
}

/** What the developer portal (/portal/…) uses. */
export interface PortalDeps {
  config: IdentityConfig;
  logger: Logger;
  /** Pending sign-ins and portal sessions. */
  cache: Cache;
  audit: AuditLog;
  apps: AppDirectory;
  users: Pick<UserDirectory, 'findById'>;
  /** The portal's sign-in: the pairwise sub of its id_token back to the person. */
  subjects: Pick<SubjectDirectory, 'userIdFor'>;
  /** The published keys the portal's id_token is checked with. */
  keys: Pick<SigningKeys, 'list'>;
  /** App teams (issue 27): who may see or change which app. */
  teams: AppTeams;
  portal: PortalServices;
}

/** An app's pages (requireRole, the page frame): the app of the path, for a member of its team. */
export type PortalGuardDeps = Pick<PortalDeps, 'config' | 'logger' | 'apps' | 'teams'>;
