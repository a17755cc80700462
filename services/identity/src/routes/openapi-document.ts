import {
  countedErrorResponse,
  ERROR_SCHEMA,
  errorResponse,
  tooManyRequestsResponse,
  type OpenApiDocument,
} from '@attest/common';

const form = (properties: Record<string, unknown>, required: string[]) => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties, required } } },
});
const basicAuth = [{ clientBasic: [] }];

/** The identity provider's endpoints (SPEC §4.1–4.6). */
export function identityOpenApi(baseUrl: string): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Attest identity (OpenID Connect provider)',
      version: '1',
      description: 'Sign-in with pairwise subjects and a verification level per person.',
    },
    servers: [{ url: baseUrl }],
    paths: {
      '/.well-known/openid-configuration': {
        get: {
          summary: 'Discovery document',
          responses: { 200: { description: 'OpenID Provider metadata' }, 405: errorResponse('method_not_allowed') },
        },
      },
      '/jwks': {
        get: {
          summary: 'Public signing keys (also /jwks.json)',
          responses: { 200: { description: 'JWK Set of RS256 keys with kid, alg, use' } },
        },
      },
      '/authorize': {
        get: {
          summary: 'Start sign-in (code, implicit and hybrid flows); also accepts POST form',
          parameters: [
            'response_type',
            'scope',
            'client_id',
            'redirect_uri',
            'state',
            'nonce',
            'response_mode',
            'code_challenge',
            'code_challenge_method',
            'prompt',
            'max_age',
            'login_hint',
          ].map((name) => ({
            name,
            in: 'query',
            required: ['response_type', 'scope', 'client_id', 'redirect_uri'].includes(name),
            schema: { type: 'string' },
          })),
          responses: {
            302: {
              description:
                'To the sign-in or consent page, or back to redirect_uri with code/tokens or error, error_description and state',
            },
            200: { description: 'response_mode=form_post: a page that posts the values to redirect_uri' },
            400: errorResponse(
              'required (client_id, redirect_uri), invalid_client or invalid_redirect_uri: an HTML page, or JSON when Accept asks for it; never a redirect',
            ),
          },
        },
      },
      '/token': {
        post: {
          summary: 'Exchange an authorization code',
          security: [...basicAuth, {}],
          requestBody: form(
            {
              grant_type: { const: 'authorization_code' },
              code: { type: 'string' },
              redirect_uri: { type: 'string' },
              code_verifier: { type: 'string' },
              client_id: { type: 'string' },
              client_secret: { type: 'string' },
            },
            ['grant_type', 'code', 'redirect_uri'],
          ),
          responses: {
            200: {
              description: 'Token response',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/TokenResponse' } } },
            },
            400: countedErrorResponse(
              'invalid_content_type, invalid_grant_type, required, invalid_grant, invalid_request (a parameter given twice), ' +
                'invalid_body (a body that cannot be read); all with OAuth error / error_description',
            ),
            401: countedErrorResponse('unauthenticated'),
            405: errorResponse('method_not_allowed'),
            413: errorResponse('payload_too_large (over BODY_LIMIT, or more than 100 form fields)'),
            415: errorResponse('unsupported_encoding (Content-Encoding), unsupported_charset'),
            429: tooManyRequestsResponse(
              'wrong client credentials, or failed code exchanges; OAuth error temporarily_unavailable',
            ),
          },
        },
      },
      '/introspect': {
        post: {
          summary: 'Introspect an access token of the calling app',
          security: basicAuth,
          requestBody: form({ token: { type: 'string' } }, ['token']),
          responses: {
            200: {
              description:
                '{active: true, client_id, exp, sub, scope, iat, token_type}, or {active: false} for a revoked token or another app’s',
            },
            400: errorResponse('invalid_content_type, required, invalid_request (client_id given twice), invalid_body'),
            401: countedErrorResponse('unauthenticated, invalid_token (malformed, forged or expired)'),
            405: errorResponse('method_not_allowed'),
            413: errorResponse('payload_too_large (over BODY_LIMIT, or more than 100 form fields)'),
            415: errorResponse('unsupported_encoding (Content-Encoding), unsupported_charset'),
            429: tooManyRequestsResponse('wrong client credentials'),
          },
        },
      },
      '/revoke': {
        post: {
          summary: 'Revoke an access token of the calling app (RFC 7009)',
          security: basicAuth,
          requestBody: form(
            {
              token: { type: 'string' },
              token_type_hint: { type: 'string', description: 'read, not trusted: access tokens are the only kind' },
            },
            ['token'],
          ),
          responses: {
            200: {
              description:
                'Empty. Also for an unknown, malformed or expired token, and for another app’s token (which stays active)',
            },
            400: errorResponse(
              'invalid_content_type, required, invalid_request (a parameter given twice), invalid_body',
            ),
            401: countedErrorResponse('unauthenticated'),
            405: errorResponse('method_not_allowed'),
            429: tooManyRequestsResponse('wrong client credentials'),
          },
        },
      },
      '/logout': {
        get: {
          summary:
            'End the browser session (OpenID Connect RP-Initiated Logout 1.0, the end_session_endpoint); also accepts POST form',
          parameters: [
            'id_token_hint',
            'client_id',
            'post_logout_redirect_uri',
            'state',
            'ui_locales',
            'logout_hint',
          ].map((name) => ({
            name,
            in: 'query',
            required: false,
            schema: { type: 'string' },
          })),
          responses: {
            302: {
              description:
                'To post_logout_redirect_uri (registered for the app, exact match) with state, after the session ended (303 after a POST)',
            },
            200: {
              description:
                'A confirmation page (no valid id_token_hint for the signed-in user), or a signed-out page when no post_logout_redirect_uri was given',
            },
            400: errorResponse(
              'invalid_request (id_token_hint not ours, client_id not its audience, post_logout_redirect_uri unregistered or without a client, a parameter given twice), invalid_client: an HTML page, never a redirect',
            ),
          },
        },
      },
      '/logout/confirm': {
        post: {
          summary: 'The confirmation page’s form: decision=logout|stay, with its CSRF token',
          requestBody: form(
            {
              csrf: { type: 'string' },
              decision: { enum: ['logout', 'stay'] },
              client_id: { type: 'string' },
              post_logout_redirect_uri: { type: 'string' },
              state: { type: 'string' },
            },
            ['csrf', 'decision'],
          ),
          responses: {
            303: { description: 'To post_logout_redirect_uri with state, or to the signed-out page' },
            200: { description: 'Signed-out (or still signed-in) page when no post_logout_redirect_uri was given' },
            400: errorResponse('invalid_parameter (decision), or the /logout checks'),
            403: errorResponse('invalid_csrf'),
          },
        },
      },
      '/userinfo': {
        get: {
          summary: 'Claims of the approved scopes (also POST)',
          security: [{ bearer: [] }],
          responses: {
            200: { description: 'sub, {base_url}/v1, {base_url}/beta, and email / name claims per scope' },
            401: errorResponse('unauthenticated, invalid_token'),
          },
        },
      },
    },
    components: {
      securitySchemes: {
        clientBasic: { type: 'http', scheme: 'basic' },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (at+jwt)' },
      },
      schemas: {
        Error: ERROR_SCHEMA,
        TokenResponse: {
          type: 'object',
          required: ['access_token', 'token_type', 'expires_in', 'scope', 'id_token'],
          properties: {
            access_token: { type: 'string' },
            token_type: { const: 'Bearer' },
            expires_in: { type: 'integer' },
            scope: { type: 'string' },
            id_token: { type: 'string' },
          },
        },
      },
    },
  };
}
