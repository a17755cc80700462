// The Device Authorization Grant (RFC 8628; issue 41): /device_authorization, the /device page, polling at
// /token. Other features and the composition root import this folder only through this file.
export { deviceAuthorizationRoute, type DeviceAuthorizationRouteDeps } from './device-authorization-route';
export { DeviceFlow, DEVICE_POLL_INTERVAL_SECONDS, type DeviceFlowDeps } from './device-flow';
export { deviceCodeGrant, DEVICE_CODE_GRANT, type DeviceGrantDeps } from './device-grant';
export { deviceRoute, type DeviceRouteDeps } from './device-route';
export { deviceStore } from './device-store';
export { normaliseUserCode, USER_CODE_ALPHABET } from './device-codes';
// OpenAPI fragments, each beside its route (the document is assembled in ../api-documents.ts)
export { deviceAuthorizationDocs } from './device-authorization-route.openapi';
export { deviceDocs } from './device-route.openapi';
