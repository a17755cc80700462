/** The admin API of API keys and of apps' state here; the keys themselves (service, store, authentication) are the kernel's. */
export { apiKeysAdminRoutes, type ApiKeysAdminDeps } from './api-keys-admin-routes';
export { apiKeyAdminComponents, appAdminComponents } from './api-keys.openapi';
