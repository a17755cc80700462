// The account page (/account) and its forms.
// Other features and the composition root import this folder only through this file.
export { accountRoute } from './account-route';
export { accountDocs, accountFormDocs } from './account-route.openapi';
export type { AccountPanel, AccountRouteDeps } from './account-route';
