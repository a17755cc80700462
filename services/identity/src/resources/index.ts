// Resources (issue 41): the APIs an operator registers (/admin/resources), for which clients get tokens bound
// to one audience (RFC 8707). Other features and the composition root import this folder only through this file.
export { ResourceDirectory } from './resource-directory';
export { resourceStore, type Resource } from './resource-store';
export { resourceAdminRoutes, resourceSchemas, type ResourceAdminDeps } from './resource-admin';
export { RESERVED_SCOPES } from './resource-schemas';
export {
  oneResourceOnly,
  ResourceIndicatorError,
  resourceAtToken,
  resourceOfRequest,
  stricterLevel,
  type BoundResource,
} from './resource-indicator';
export { resourceIntrospection, type ResourceIntrospectionDeps } from './resource-introspection';
export {
  consentCovers,
  consentCoversToken,
  grantResourceRegistered,
  issuedToThisResource,
  refreshGrantHolds,
  resourceKey,
} from './resource-grants';
