// The admin API (/admin/…): apps, users, members, signing keys, sessions.
// Other features and the composition root import this folder only through this file.
export { identityAdminApi } from './admin-document';
export { identityAdminRoutes, type AdminDeps } from './admin-routes';
export { redirectUriProblem } from './admin-schemas';
export { createApp, rotateAppSecret, setAppDisabled, updateApp, type AppAdminDeps } from './app-operations';
export type { KeyAdminDeps } from './key-admin';
export type { MemberAdminDeps } from './member-admin';
export type { SessionAdminDeps } from './session-admin';
export type { UserAdminDeps } from './user-admin';
