import {
  bodyErrorResponses,
  countedErrorResponse,
  jsonResponse,
  tooManyRequestsResponse,
  type EndpointDocs,
} from '@attest/common';
import { FORM } from '../kernel/openapi-document';
import { dpopParameter, DPOP_NONCE_HEADER, basicAuth, CORS_PREFLIGHT } from './oauth-openapi';
import { TOKEN_FORM } from './oauth-forms';

// OpenAPI fragment of /token: served as the route registers it (endpoint(…)); see api-documents.ts.

/** The schemas only /token's answer uses, for the document's components. */
export const tokenSchemas = {
  /** RFC 8693 §4.1 (issue 42): the agent acting for the token's subject, and who acted before it. */
  Actor: {
    type: 'object',
    required: ['sub'],
    description: 'A delegated token (token exchange): sub is the client id of the agent acting for the person',
    properties: { sub: { type: 'string' }, act: { $ref: '#/components/schemas/Actor' } },
  },
  TokenResponse: {
    type: 'object',
    required: ['access_token', 'token_type', 'expires_in', 'scope'],
    properties: {
      access_token: { type: 'string' },
      token_type: {
        enum: ['Bearer', 'DPoP'],
        description: 'DPoP when the request carried a DPoP proof: the access token is bound to its key',
      },
      expires_in: { type: 'integer' },
      scope: { type: 'string' },
      id_token: { type: 'string', description: 'authorization_code: always (not at a refresh)' },
      issued_token_type: {
        const: 'urn:ietf:params:oauth:token-type:access_token',
        description: 'token-exchange (RFC 8693 §2.2.1): the kind of token issued',
      },
      refresh_token: {
        type: 'string',
        description: 'offline_access was granted: the next refresh token of the family (each is used once)',
      },
    },
  },
};

export const tokenDocs = {
  POST: {
    summary:
      'Exchange an authorization code, a refresh token, a device code or (token exchange) a person’s access token; client_credentials',
    description:
      'grant_type authorization_code: code, redirect_uri, code_verifier, resource (RFC 8707). grant_type refresh_token ' +
      '(issue 41): refresh_token, and optionally a narrower scope or the grant’s resource; a DPoP-bound grant needs a ' +
      'proof by its key; invalid_scope and invalid_target when they would widen the grant. grant_type ' +
      'urn:ietf:params:oauth:grant-type:device_code (RFC 8628): device_code, polled every `interval` seconds until the ' +
      'person decides at /device; the tokens are answered once. ' +
      'urn:ietf:params:oauth:grant-type:token-exchange (RFC 8693; issue 42): subject_token (a person’s access token for ' +
      'a resource) with subject_token_type urn:ietf:params:oauth:token-type:access_token, optionally actor_token (the ' +
      'app’s client_credentials token), resource or audience and scope (narrowed, never widened: invalid_target, ' +
      'invalid_scope); answers a short-lived access token with act {sub: the app} and issued_token_type; ' +
      'unauthorized_client for a public client, or for another app’s token without may_act_for_users.',
    tags: ['oidc'],
    security: [...basicAuth, {}],
    parameters: [
      dpopParameter(
        'DPoP proof (htm POST, htu {base_url}/token): the access token is bound to its key (token_type DPoP); ' +
          'required for an app with dpop_bound_access_tokens, and for a code asked for with dpop_jkt',
      ),
    ],
    body: { contentType: FORM, schema: TOKEN_FORM },
    responses: {
      200: jsonResponse('Token response', { $ref: '#/components/schemas/TokenResponse' }, DPOP_NONCE_HEADER),
      ...bodyErrorResponses(
        'invalid_content_type, invalid_grant_type, required, invalid_grant, invalid_request (a parameter given twice); ' +
          'all with OAuth error / error_description',
      ),
      400: countedErrorResponse(
        'invalid_content_type, invalid_grant_type, required, invalid_grant, invalid_target, invalid_scope, unauthorized_client, ' +
          'invalid_request (a parameter given twice, ' +
          'or no DPoP proof from an app that requires DPoP), invalid_body (a body that cannot be read), ' +
          'invalid_dpop_proof, use_dpop_nonce (with a DPoP-Nonce header); the device flow’s authorization_pending, ' +
          'slow_down, access_denied, expired_token; all with OAuth error / error_description',
      ),
      401: countedErrorResponse('unauthenticated'),
      429: tooManyRequestsResponse(
        'wrong client credentials, or failed code exchanges; OAuth error temporarily_unavailable',
      ),
    },
  },
  OPTIONS: CORS_PREFLIGHT,
} satisfies EndpointDocs;
