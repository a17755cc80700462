// Refresh tokens (issue 41): issued with a code's exchange for offline_access, rotated at /token
// (grant_type=refresh_token), ended with their session, consent or family. Other features and the composition
// root import this folder only through this file.
export { refreshStore } from './refresh-store';
export { RefreshTokens } from './refresh-tokens';
export { refreshTokenGrant, type RefreshGrantDeps } from './refresh-grant';
