// client_credentials (issue 41): a confidential app's token for a registered resource, acting as itself.
// Other features and the composition root import this folder only through this file.
export { clientCredentialsGrant, isClientToken, type ClientCredentialsDeps } from './client-credentials-grant';
