// The developer portal (/portal): its routes, pages, guard, session and client of the transactions admin API.
// Other features and the composition root import this folder only through this file.
export { ensurePortalClient, type PortalClientDeps } from './portal-client';
export type { PortalDeps, PortalServices } from './portal-deps';
export { portalDocs } from './portal-document';
export { portalRoutes } from './portal-route';
export { portalServices } from './portal-services';
