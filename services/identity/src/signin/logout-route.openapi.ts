import { htmlResponse, redirectResponse, type EndpointDocs, type ResponseDoc } from '@attest/common';
import { FORM, pageError, pageFormErrors } from '../kernel/openapi-document';
import { LOGOUT_PARAMETERS, LOGOUT_CONFIRM_FORM } from './signin-forms';

// OpenAPI fragment of /logout and /logout/confirm: served as the route registers it (endpoint(…)); see api-documents.ts.

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

export const logoutDocs = {
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
} satisfies EndpointDocs;

export const logoutConfirmDocs = {
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
} satisfies EndpointDocs;
