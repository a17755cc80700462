import type { Router } from 'express';
import { appAdminRoutes } from './app-admin';
import type { AppAdminDeps } from './app-operations';
import { keyAdminRoutes, type KeyAdminDeps } from './key-admin';
import { memberAdminRoutes, type MemberAdminDeps } from './member-admin';
import { sessionAdminRoutes, type SessionAdminDeps } from './session-admin';
import { userAdminRoutes, type UserAdminDeps } from './user-admin';

/** What the admin API uses: each part's own deps. */
export interface AdminDeps {
  apps: AppAdminDeps;
  members: MemberAdminDeps;
  users: UserAdminDeps;
  sessions: SessionAdminDeps;
  keys: KeyAdminDeps;
}

/** Admin API (admin port only): apps, users, signing keys. The audit trail and admin tokens come from common. */
export function identityAdminRoutes(router: Router, deps: AdminDeps): void {
  appAdminRoutes(router, deps.apps);
  memberAdminRoutes(router, deps.members);
  userAdminRoutes(router, deps.users);
  sessionAdminRoutes(router, deps.sessions);
  keyAdminRoutes(router, deps.keys);
}
