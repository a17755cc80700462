import type { ApiInfo } from '@attest/common';
import { accountDocs, accountFormDocs } from './account';
import {
  authorizeDocs,
  consentDocs,
  discoveryDocs,
  introspectDocs,
  jwksDocs,
  parDocs,
  revokeDocs,
  tokenDocs,
  tokenSchemas,
  userinfoDocs,
} from './oauth';
import { approvalDocs, bcAuthorizeDocs, loginHintDocs } from './ciba';
import { logoutConfirmDocs, logoutDocs, signinDocs, signupDocs } from './signin';
import { authorizationServerDocs, registerDocs, registrationClientDocs } from './registration';
import { deviceAuthorizationDocs, deviceDocs } from './device';
import { endAgentDocs } from './delegation';

// The public OpenAPI document: its info and shared components here; each endpoint's operations are a
// fragment beside its route (oauth/, signin/, account/, portal/), registered as the route mounts
// (endpoint(…)), so the document lists them in mount order. The admin document: ./admin (identityAdminApi).

/** The identity provider's document (SPEC §4.1–4.6): info and shared components; operations come from the routes. */
export function identityApi(baseUrl: string): ApiInfo {
  return {
    title: 'Attest identity (OpenID Connect provider)',
    version: '1',
    description: 'Sign-in with pairwise subjects and a verification level per person.',
    serverUrl: baseUrl,
    components: {
      securitySchemes: {
        clientBasic: { type: 'http', scheme: 'basic' },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (at+jwt)' },
        dpop: {
          type: 'http',
          scheme: 'dpop',
          // OpenAPI 3.1 allows bearerFormat only with scheme bearer: the token's format is in the description
          description:
            'RFC 9449: Authorization: DPoP <access token> (a JWT, at+jwt, bound by cnf.jkt), and a DPoP header with ' +
            'a proof (htm, htu, iat, jti, ath) signed by the key the token is bound to',
        },
      },
      schemas: { ...tokenSchemas },
    },
  };
}

/** Each public route's operations, by route (the fragments, gathered: a test compares them to the routes' schemas). */
export const identityDocs = {
  discovery: discoveryDocs,
  authorizationServer: authorizationServerDocs,
  jwks: jwksDocs,
  authorize: authorizeDocs,
  signin: signinDocs,
  signup: signupDocs,
  consent: consentDocs,
  account: accountDocs,
  ...accountFormDocs,
  endAgent: endAgentDocs,
  loginHint: loginHintDocs,
  token: tokenDocs,
  par: parDocs,
  introspect: introspectDocs,
  revoke: revokeDocs,
  register: registerDocs,
  registrationClient: registrationClientDocs,
  userinfo: userinfoDocs,
  deviceAuthorization: deviceAuthorizationDocs,
  device: deviceDocs,
  logout: logoutDocs,
  logoutConfirm: logoutConfirmDocs,
  bcAuthorize: bcAuthorizeDocs,
  approve: approvalDocs.approve,
  deny: approvalDocs.deny,
};
