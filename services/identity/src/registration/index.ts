// Clients that register themselves (issue 41): RFC 8414 metadata (/.well-known/oauth-authorization-server),
// RFC 7591 Dynamic Client Registration with RFC 7592 management (/register), Client ID Metadata Documents
// (https client_ids), and the admin API of initial access tokens (/admin/registration-tokens).
// Other features and the composition root import this folder only through this file.
export { authorizationServerMetadata, authorizationServerRoute } from './authorization-server-route';
export { clientIdUrlProblem, METADATA_CACHE_SECONDS, MetadataDocuments } from './metadata-documents';
export { registerRoute } from './register-route';
export { registrationAdminRoutes, type RegistrationAdminDeps } from './registration-token-admin';
export { Registrations } from './registrations';
export { registrationStore, type RegistrationStore } from './registration-store';
export type { RegistrationServices } from './services';
// OpenAPI fragments, each beside its route (the document is assembled in ../api-documents.ts)
export { authorizationServerDocs } from './authorization-server-route.openapi';
export { registerDocs, registrationClientDocs } from './register-route.openapi';
