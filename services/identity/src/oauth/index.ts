// OAuth 2.0 / OpenID Connect endpoints: /authorize (and its consent step), /par, /token, /introspect, /revoke, /userinfo, discovery, /jwks; client authentication, DPoP, request objects, grants.
// Other features and the composition root import this folder only through this file.
export {
  authorizationFlow,
  expiredInteraction,
  interactionBinding,
  proceed,
  type AuthorizationFlow,
  type InteractionDeps,
  type ProceedDeps,
} from './authorization-flow';
export { grantHolder } from './active-grant';
// what other grants and endpoints of an authenticated app reuse (CIBA, issue 42; the device flow, issue 41)
export {
  ACR_VALUES_SUPPORTED,
  acrOf,
  essentialAcr,
  parseClaimsParameter,
  satisfies,
  unmetDemand,
  userinfoSignInClaims,
  type ClaimsRequest,
} from './assurance';
export { consentScopes } from './authorization-step';
export { userClaims } from './claims';
export { authenticateApp, authenticatedApp, field, parseForm, type ClientAuthDeps } from './client-authentication';
export { oauthJsonErrors, RedirectError } from './oauth-error';
export { givesRefreshToken, singleParams, type Params } from './authorization-request';
export { basicAuth, CORS_PREFLIGHT, credentialErrors } from './oauth-openapi';
export { authorizeRoute } from './authorize-route';
export { clientJwksProblem, ClientKeys } from './client-keys';
export { consentRoute } from './consent-route';
export { discoveryMetadata, discoveryRoute } from './discovery-route';
export { DpopError, dpopAlgorithmsOf, dpopHeader, DpopProofs } from './dpop';
export {
  boundAtToken,
  Grants,
  type ApprovedGrant,
  type ExchangedGrant,
  type RefreshIssuer,
  type TokenResponse,
} from './grants';
export { InteractionLimit } from './interaction-limit';
export { InteractionStore, type Interaction } from './interactions';
export { introspectRoute } from './introspect-route';
export { jwksRoute } from './jwks-route';
export { parRoute } from './par-route';
export { PushedRequests } from './pushed-requests';
export { revokeRoute } from './revoke-route';
export { OAUTH_TOKEN_ERRORS, tokenRoute } from './token-route';
export { grantField, tokenDpopJkt, type TokenGrantDeps } from './token-grant';
export { userinfoRoute } from './userinfo-route';
export type { OAuthServices } from './services';
// OpenAPI fragments, each beside its route (the document is assembled in ../api-documents.ts)
export { authorizeDocs } from './authorize-route.openapi';
export { consentDocs } from './consent-route.openapi';
export { discoveryDocs } from './discovery-route.openapi';
export { introspectDocs } from './introspect-route.openapi';
export { jwksDocs } from './jwks-route.openapi';
export { parDocs } from './par-route.openapi';
export { revokeDocs } from './revoke-route.openapi';
export { tokenDocs, tokenSchemas } from './token-route.openapi';
export { userinfoDocs } from './userinfo-route.openapi';
