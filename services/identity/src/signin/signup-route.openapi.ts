import { htmlResponse, redirectResponse, type EndpointDocs } from '@attest/common';
import { FORM, pageError, pageFormErrors } from '../kernel/openapi-document';
import { SIGNIN_QUERY, SIGNUP_FORM } from './signin-forms';

// OpenAPI fragment of /signup: served as the route registers it (endpoint(…)); see api-documents.ts.

export const signupDocs = {
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
} satisfies EndpointDocs;
