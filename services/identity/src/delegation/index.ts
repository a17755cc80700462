// Delegation (issue 42, RFC 8693 token exchange): an agent exchanges a person's access token at /token for a
// short-lived one acting for them (`act`); the person sees and ends each agent on the account page.
// Other features and the composition root import this folder only through this file.
export { delegationStore, type Delegation } from './delegation-store';
export {
  ACCESS_TOKEN_TYPE,
  Delegations,
  delegationKey,
  TOKEN_EXCHANGE_GRANT,
  type DelegationsDeps,
  type DelegationsOptions,
} from './delegations';
export { tokenExchangeGrant, type TokenExchangeGrantDeps } from './token-exchange-grant';
export { delegationSection } from './delegation-section';
export { endAgentDocs } from './delegation.openapi';
