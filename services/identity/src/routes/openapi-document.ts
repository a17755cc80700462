import type Joi from 'joi';
import {
  bodyErrorResponses,
  countedErrorResponse,
  emptyResponse,
  errorResponse,
  htmlResponse,
  jsonResponse,
  redirectResponse,
  tooManyRequestsResponse,
  type ApiInfo,
  type EndpointDocs,
  type OperationDoc,
  type ParameterDoc,
  type ResponseDoc,
} from '@attest/common';
import {
  ACCOUNT_FORMS,
  ACCOUNT_QUERY,
  AUTHORIZE_PARAMETERS,
  CONSENT_FORM,
  INTERACTION_QUERY,
  INTROSPECT_FORM,
  LOGOUT_CONFIRM_FORM,
  LOGOUT_PARAMETERS,
  PAR_FORM,
  REVOKE_FORM,
  SIGNIN_FORM,
  SIGNIN_QUERY,
  SIGNUP_FORM,
  TOKEN_FORM,
} from './form-schemas';

export const FORM = 'application/x-www-form-urlencoded';

/** The DPoP proof header (RFC 9449 §4) of /token and /userinfo. */
const dpopParameter = (description: string): ParameterDoc => ({
  name: 'DPoP',
  in: 'header',
  required: false,
  description,
  schema: { type: 'string', description: 'A JWT: typ dpop+jwt, alg of dpop_signing_alg_values_supported, jwk' },
});
const DPOP_NONCE_HEADER = {
  'DPoP-Nonce': {
    description:
      'For a request with a DPoP proof: a nonce to put in the next proof (required with DPOP_NONCE_REQUIRED)',
    schema: { type: 'string' },
  },
};
const basicAuth = [{ clientBasic: [] }];

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
          bearerFormat: 'JWT (at+jwt) bound by cnf.jkt',
          description:
            'RFC 9449: Authorization: DPoP <access token>, and a DPoP header with a proof (htm, htu, iat, jti, ath) ' +
            'signed by the key the token is bound to',
        },
      },
      schemas: {
        TokenResponse: {
          type: 'object',
          required: ['access_token', 'token_type', 'expires_in', 'scope', 'id_token'],
          properties: {
            access_token: { type: 'string' },
            token_type: {
              enum: ['Bearer', 'DPoP'],
              description: 'DPoP when the request carried a DPoP proof: the access token is bound to its key',
            },
            expires_in: { type: 'integer' },
            scope: { type: 'string' },
            id_token: { type: 'string' },
          },
        },
      },
    },
  };
}

/** An error of a browser page: the HTML error page, or the JSON error when Accept prefers it. */
export const pageError = (description: string): ResponseDoc => ({
  description,
  content: {
    'text/html': { schema: { type: 'string' } },
    'application/json': { schema: { $ref: '#/components/schemas/Error' } },
  },
});

/** The answers every form a page posts can give besides its own. */
export const pageFormErrors = (badRequest: string): Record<number, ResponseDoc> => ({
  400: pageError(
    `${badRequest}; invalid_content_type (not a form), invalid_body (a form that cannot be read), invalid_request (a field given twice)`,
  ),
  403: pageError(
    'invalid_csrf: the form’s CSRF token is missing, expired or not this browser’s; or unmet_authentication_requirements: the person is below the verification level the request or app demands (a page with a link back to the app)',
  ),
  413: pageError('payload_too_large: over BODY_LIMIT, or more than 100 form fields'),
  415: pageError('unsupported_encoding (Content-Encoding), unsupported_charset'),
});

const CORS_PREFLIGHT: OperationDoc = {
  summary: 'CORS preflight',
  tags: ['oidc'],
  responses: { 204: emptyResponse('The methods and headers other origins may use') },
};

const authorizeResponses: Record<number, ResponseDoc> = {
  302: redirectResponse(
    'To the sign-in or consent page, or back to redirect_uri with code/tokens or error, error_description and state',
  ),
  303: redirectResponse('After a POST: the same destinations as the 302'),
  200: htmlResponse('response_mode=form_post: a page that posts the values to redirect_uri'),
  400: pageError(
    'required (client_id, redirect_uri), invalid_client or invalid_redirect_uri: an HTML page, or JSON when Accept asks for it; never a redirect',
  ),
  403: htmlResponse(
    'unmet_authentication_requirements: the signed-in person is below the verification level the request (an essential acr in claims) or the app (its minimum) demands; the page says why and links back to redirect_uri with error=unmet_authentication_requirements (prompt=none: that redirect at once)',
  ),
  413: pageError('payload_too_large (POST)'),
  415: pageError('unsupported_encoding, unsupported_charset (POST)'),
  429: pageError(
    'too_many_requests: too many new sign-ins from this address (INTERACTIONS_PER_ADDRESS), with Retry-After and the RateLimit fields',
  ),
};

const logoutResponses: Record<number, ResponseDoc> = {
  302: redirectResponse(
    'To post_logout_redirect_uri (registered for the app, exact match) with state, after the session ended',
  ),
  303: redirectResponse('After a POST: as the 302'),
  200: htmlResponse(
    'A confirmation page (no valid id_token_hint for the signed-in user), or a signed-out page when no post_logout_redirect_uri was given',
  ),
  400: pageError(
    'invalid_request (id_token_hint not ours, client_id not its audience, post_logout_redirect_uri unregistered or without a client, a parameter given twice), invalid_client: an HTML page, never a redirect',
  ),
  413: pageError('payload_too_large (POST)'),
  415: pageError('unsupported_encoding, unsupported_charset; or a POST that is not a form'),
};

const signInPage: Record<number, ResponseDoc> = {
  200: htmlResponse('The page; again with a message when the form was refused (wrong password, a passkey that failed)'),
  302: redirectResponse('To the next step when there is nothing to ask'),
  303: redirectResponse('After a POST: to the consent page, back to the app, or to /account'),
};

const accountForm = (
  summary: string,
  schema: Joi.ObjectSchema,
  extra: Record<number, ResponseDoc> = {},
): EndpointDocs => ({
  POST: {
    summary,
    tags: ['account'],
    body: { contentType: FORM, schema },
    responses: {
      303: redirectResponse('Back to /account with a notice; to /signin?next=account without a session'),
      200: htmlResponse('The account page again, with what went wrong'),
      ...pageFormErrors('invalid_parameter or required, naming the field'),
      404: pageError('not_found: no such session, passkey or consent of this user'),
      429: pageError('too_many_requests: too many wrong current passwords'),
      ...extra,
    },
  },
});

/** Passkey changes need a sign-in of the last 5 minutes (issue 23): else 403 and a link to sign in again. */
const reauthentication = {
  403: pageError(
    'invalid_csrf: the form’s CSRF token is missing or not this browser’s, or the last sign-in is ' +
      'more than 5 minutes old (the account page again, with a link to sign in again at /signin?next=account)',
  ),
};

const INTROSPECTION = {
  oneOf: [
    {
      type: 'object',
      required: ['active', 'client_id', 'exp', 'sub', 'scope', 'iat', 'token_type'],
      properties: {
        active: { const: true },
        client_id: { type: 'string' },
        exp: { type: 'integer' },
        sub: { type: 'string' },
        scope: { type: 'string' },
        iat: { type: 'integer' },
        token_type: { enum: ['Bearer', 'DPoP'] },
        cnf: {
          type: 'object',
          description: 'A DPoP-bound token (RFC 9449 §6.2): the RFC 7638 thumbprint of its key',
          required: ['jkt'],
          additionalProperties: false,
          properties: { jkt: { type: 'string' } },
        },
        acr: {
          type: 'string',
          description: 'The verification level of the sign-in: urn:attest:loa:orb or urn:attest:loa:device',
        },
        amr: { type: 'array', items: { type: 'string' }, description: 'RFC 8176 methods, e.g. pwd, hwk, user' },
        auth_time: { type: 'integer', description: 'When the person signed in (seconds since the epoch)' },
      },
    },
    {
      type: 'object',
      required: ['active'],
      additionalProperties: false,
      properties: { active: { const: false } },
    },
  ],
};

const credentialErrors = (extra401 = ''): Record<number, ResponseDoc> => ({
  401: countedErrorResponse(`unauthenticated${extra401}`),
  429: tooManyRequestsResponse('wrong client credentials'),
});

/** Each public route's operations, by route. */
export const identityDocs = {
  discovery: {
    GET: {
      summary: 'Discovery document',
      tags: ['oidc'],
      responses: {
        200: jsonResponse('OpenID Provider metadata (ETag; 304 on a match)', {
          type: 'object',
          required: ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri'],
        }),
        304: emptyResponse('Not modified (If-None-Match)'),
      },
    },
    OPTIONS: CORS_PREFLIGHT,
  },
  jwks: {
    GET: {
      summary: 'Public signing keys (also at /jwks.json)',
      tags: ['oidc'],
      responses: {
        200: jsonResponse('JWK Set of RS256 keys with kid, alg, use', {
          type: 'object',
          required: ['keys'],
          properties: {
            keys: {
              type: 'array',
              items: { type: 'object', required: ['kty', 'kid'], properties: { kid: { type: 'string' } } },
            },
          },
        }),
        304: emptyResponse('Not modified (If-None-Match)'),
      },
    },
    OPTIONS: CORS_PREFLIGHT,
  },
  authorize: {
    GET: {
      summary: 'Start sign-in (code, implicit and hybrid flows)',
      tags: ['oidc'],
      query: AUTHORIZE_PARAMETERS,
      responses: authorizeResponses,
    },
    POST: {
      summary: 'Start sign-in, the parameters as a form',
      tags: ['oidc'],
      body: { contentType: FORM, schema: AUTHORIZE_PARAMETERS },
      responses: authorizeResponses,
    },
  },
  signin: {
    GET: {
      summary: 'The sign-in page (password or passkey)',
      tags: ['pages'],
      query: SIGNIN_QUERY,
      responses: {
        ...signInPage,
        400: pageError('invalid_request: no sign-in in progress with this interaction, or it expired'),
      },
    },
    POST: {
      summary: 'The sign-in form',
      tags: ['pages'],
      body: {
        contentType: FORM,
        schema: SIGNIN_FORM,
      },
      responses: {
        ...signInPage,
        ...pageFormErrors('invalid_request: no sign-in in progress with this interaction'),
        401: htmlResponse('The page again: wrong username or password, or a passkey that did not verify'),
        429: pageError(
          'too_many_requests: too many failed sign-ins for this user or from this address (passwords), or failed passkey assertions from this address; with Retry-After and the RateLimit fields',
        ),
      },
    },
  },
  signup: {
    GET: {
      summary: 'The sign-up page (a passkey account), when SIGNUP is on',
      tags: ['pages'],
      query: SIGNIN_QUERY,
      responses: {
        200: htmlResponse('The page'),
        403: pageError('signup_disabled: creating accounts is turned off (SIGNUP)'),
        400: pageError('invalid_request: no sign-in in progress with this interaction'),
      },
    },
    POST: {
      summary: 'The sign-up form: a username, a name and a new passkey',
      tags: ['pages'],
      body: {
        contentType: FORM,
        schema: SIGNUP_FORM,
      },
      responses: {
        303: redirectResponse('Signed up and in: on to consent, the app or /account'),
        200: htmlResponse('The page again, with what went wrong'),
        ...pageFormErrors('invalid_parameter or required naming the field'),
        403: pageError('signup_disabled (SIGNUP is off), or invalid_csrf'),
        409: pageError('username_taken'),
        429: pageError(
          'too_many_requests: too many sign-ups started from this address (every username checked counts); with Retry-After and the RateLimit fields',
        ),
      },
    },
  },
  consent: {
    GET: {
      summary: 'The consent page: which claims the app asks for',
      tags: ['pages'],
      query: INTERACTION_QUERY,
      responses: {
        200: htmlResponse('The page'),
        302: redirectResponse('To /signin when the browser has no session'),
        400: pageError('invalid_request: no sign-in in progress with this interaction'),
      },
    },
    POST: {
      summary: 'The consent form: decision=approve|deny',
      tags: ['pages'],
      body: {
        contentType: FORM,
        schema: CONSENT_FORM,
      },
      responses: {
        302: redirectResponse('Back to the app with the code or tokens, or access_denied'),
        303: redirectResponse('Back to the app, or to /signin when the session ended'),
        200: htmlResponse('response_mode=form_post: the page that posts the answer to the app'),
        ...pageFormErrors('invalid_parameter (decision), invalid_request (no such interaction)'),
      },
    },
  },
  account: {
    GET: {
      summary: 'The account page: sessions, consents, passkeys, password',
      tags: ['account'],
      query: ACCOUNT_QUERY,
      responses: {
        200: htmlResponse('The page'),
        302: redirectResponse('To /signin?next=account without a session'),
      },
    },
  } as EndpointDocs,
  withdrawConsent: accountForm('Withdraw the consent given to an app', ACCOUNT_FORMS.withdrawConsent),
  addPasskey: accountForm('Add a passkey', ACCOUNT_FORMS.addPasskey, {
    ...reauthentication,
    409: pageError('The account page again: that passkey is already registered'),
  }),
  removePasskey: accountForm('Remove a passkey', ACCOUNT_FORMS.removePasskey, {
    ...reauthentication,
    409: pageError('The account page again: the last passkey of an account without a password stays'),
  }),
  changePassword: accountForm('Change the password', ACCOUNT_FORMS.changePassword),
  endSession: accountForm('End one of the user’s sessions', ACCOUNT_FORMS.endSession),
  endOtherSessions: accountForm('End every session of the user but this one', ACCOUNT_FORMS.endOtherSessions),
  token: {
    POST: {
      summary: 'Exchange an authorization code',
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
          'invalid_content_type, invalid_grant_type, required, invalid_grant, invalid_request (a parameter given twice, ' +
            'or no DPoP proof from an app that requires DPoP), invalid_body (a body that cannot be read), ' +
            'invalid_dpop_proof, use_dpop_nonce (with a DPoP-Nonce header); all with OAuth error / error_description',
        ),
        401: countedErrorResponse('unauthenticated'),
        429: tooManyRequestsResponse(
          'wrong client credentials, or failed code exchanges; OAuth error temporarily_unavailable',
        ),
      },
    },
    OPTIONS: CORS_PREFLIGHT,
  },
  par: {
    POST: {
      summary: 'Push an authorization request (PAR, RFC 9126); send the browser to /authorize with the request_uri',
      tags: ['oidc'],
      security: [...basicAuth, {}],
      parameters: [
        dpopParameter(
          'DPoP proof (RFC 9449 §10, htm POST, htu {base_url}/par): its key thumbprint becomes the request’s ' +
            'dpop_jkt (the code is then exchanged only with a proof by that key); a dpop_jkt sent too must match it',
        ),
      ],
      body: { contentType: FORM, schema: PAR_FORM },
      responses: {
        201: jsonResponse(
          'The request_uri, single use, and its lifetime in seconds (at most 60)',
          {
            type: 'object',
            required: ['request_uri', 'expires_in'],
            additionalProperties: false,
            properties: {
              request_uri: { type: 'string', pattern: '^urn:ietf:params:oauth:request_uri:' },
              expires_in: { type: 'integer', maximum: 60 },
            },
          },
          DPOP_NONCE_HEADER,
        ),
        ...bodyErrorResponses(
          'invalid_request (a parameter refused, given twice, request_uri pushed, or a dpop_jkt other than the DPoP ' +
            'proof’s key), required, invalid_redirect_uri, invalid_request_object, invalid_scope, ' +
            'unsupported_response_type, unauthorized_client, invalid_dpop_proof, use_dpop_nonce (with a DPoP-Nonce ' +
            'header); all with OAuth error / error_description',
        ),
        ...credentialErrors(' (OAuth error invalid_client): wrong secret or client_assertion'),
      },
    },
  },
  introspect: {
    POST: {
      summary: 'Introspect an access token of the calling app',
      tags: ['oidc'],
      security: basicAuth,
      body: { contentType: FORM, schema: INTROSPECT_FORM },
      responses: {
        200: jsonResponse(
          '{active: true, client_id, exp, sub, scope, iat, token_type, acr, amr, auth_time, and cnf for a DPoP-bound token}, ' +
            'or {active: false} for a revoked token or another app’s',
          INTROSPECTION,
        ),
        ...bodyErrorResponses('invalid_content_type, required, invalid_request (client_id given twice)'),
        ...credentialErrors(', invalid_token (malformed, forged or expired)'),
      },
    },
  },
  revoke: {
    POST: {
      summary: 'Revoke an access token of the calling app (RFC 7009)',
      tags: ['oidc'],
      security: basicAuth,
      body: {
        contentType: FORM,
        schema: REVOKE_FORM,
      },
      responses: {
        200: emptyResponse(
          'Empty. Also for an unknown, malformed or expired token, and for another app’s token (which stays active)',
        ),
        ...bodyErrorResponses('invalid_content_type, required, invalid_request (a parameter given twice)'),
        ...credentialErrors(),
      },
    },
  },
  userinfo: {
    OPTIONS: CORS_PREFLIGHT,
    ...Object.fromEntries(
      (['GET', 'POST'] as const).map((method) => [
        method,
        {
          summary: method === 'GET' ? 'Claims of the approved scopes' : 'Claims of the approved scopes (POST)',
          tags: ['oidc'],
          security: [{ bearer: [] }, { dpop: [] }],
          parameters: [
            dpopParameter(
              `With Authorization: DPoP: a new proof by the token's key (htm ${method}, htu {base_url}/userinfo, ath)`,
            ),
          ],
          responses: {
            200: jsonResponse(
              'sub, {base_url}/v1, {base_url}/beta, email / name claims per scope, and acr, amr, auth_time when the claims parameter asked /userinfo for them',
              {
                type: 'object',
                required: ['sub'],
                properties: {
                  sub: { type: 'string' },
                  acr: { type: 'string' },
                  amr: { type: 'array', items: { type: 'string' } },
                  auth_time: { type: 'integer' },
                },
              },
            ),
            401: errorResponse(
              'unauthenticated, invalid_token (also a DPoP-bound token sent as Bearer), invalid_dpop_proof, ' +
                'use_dpop_nonce; a DPoP refusal has WWW-Authenticate: DPoP error=…, algs=… (RFC 9449 §7.1)',
            ),
          },
        } satisfies OperationDoc,
      ]),
    ),
  } as EndpointDocs,
  logout: {
    GET: {
      summary: 'End the browser session (OpenID Connect RP-Initiated Logout 1.0, the end_session_endpoint)',
      tags: ['oidc'],
      query: LOGOUT_PARAMETERS,
      responses: logoutResponses,
    },
    POST: {
      summary: 'End the browser session, the parameters as a form',
      tags: ['oidc'],
      body: { contentType: FORM, schema: LOGOUT_PARAMETERS },
      responses: { ...logoutResponses, 400: logoutResponses[400] },
    },
  },
  logoutConfirm: {
    POST: {
      summary: 'The confirmation page’s form: decision=logout|stay, with its CSRF token',
      tags: ['oidc'],
      body: {
        contentType: FORM,
        schema: LOGOUT_CONFIRM_FORM,
      },
      responses: {
        303: redirectResponse('To post_logout_redirect_uri with state, or to the signed-out page'),
        200: htmlResponse('Signed-out (or still signed-in) page when no post_logout_redirect_uri was given'),
        ...pageFormErrors('invalid_parameter (decision), or the /logout checks'),
      },
    },
  },
} satisfies Record<string, EndpointDocs>;
