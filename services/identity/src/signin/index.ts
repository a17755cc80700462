// Sign-in and sign-up pages (passwords, passkeys), logout and back-channel logout, the assets those pages load.
// Other features and the composition root import this folder only through this file.
export { recordAccountEvent } from './account-audit';
export { passkeyAccounts } from './accounts';
export { assetsRoute } from './assets-route';
export { BackChannelLogout } from './backchannel-logout';
export { logoutDeliveryStore } from './logout-delivery-store';
export { logoutRoute } from './logout-route';
export { passkeyMessage } from './passkey-messages';
export { passkeyStore, removePasskeyKeepingOne } from './passkey-store';
export { parseCredential, passkeyAmr, PasskeyCeremonies, Passkeys } from './passkeys';
export { signInRoute } from './signin-route';
export { signUpRoute } from './signup-route';
export type { SignInServices } from './services';
export { signInFlow, type SignInFlow } from './sign-in-flow';
// OpenAPI fragments, each beside its route (the document is assembled in ../api-documents.ts)
export { logoutConfirmDocs, logoutDocs } from './logout-route.openapi';
export { signinDocs } from './signin-route.openapi';
export { signupDocs } from './signup-route.openapi';
