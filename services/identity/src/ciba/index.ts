// Approval of one action (issue 42): Client-Initiated Backchannel Authentication (CIBA Core 1.0, poll and ping
// modes) with Rich Authorization Requests (RFC 9396): POST /bc-authorize, the CIBA grant at /token, the account
// page's "Waiting for your approval" and its forms, the notice on the pages, the ping notifications.
// Other features and the composition root import this folder only through this file.
export { approvalRoute, type ApprovalRouteDeps } from './approval-route';
export { approvalSection, type ApprovalSectionDeps, type SectionInput } from './approval-section';
export { AUTHORIZATION_DETAILS_TYPES, parseAuthorizationDetails } from './authorization-details';
export { BackchannelRequests } from './backchannel-requests';
export { backchannelStore } from './backchannel-store';
export { bcAuthorizeRoute, type BcAuthorizeRouteDeps } from './bc-authorize-route';
export { CIBA_GRANT_TYPE, cibaGrant, type CibaGrantDeps } from './ciba-grant';
export { loginHintSection, type LoginHintSectionDeps } from './login-hint-section';
export { LOGIN_HINT_TOKEN_TTL_SECONDS, LoginHintTokens } from './login-hint-tokens';
export { pendingApprovalsNotice } from './pending-notice';
export { PingNotifier } from './ping';
// OpenAPI fragments, each beside its route (the document is assembled in ../api-documents.ts)
export { approvalDocs } from './approval-route.openapi';
export { bcAuthorizeDocs } from './bc-authorize-route.openapi';
export { loginHintDocs } from './login-hint-section.openapi';
