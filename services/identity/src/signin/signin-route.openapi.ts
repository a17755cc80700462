import { htmlResponse, redirectResponse, type EndpointDocs, type ResponseDoc } from '@attest/common';
import { FORM, pageError, pageFormErrors } from '../kernel/openapi-document';
import { SIGNIN_QUERY, SIGNIN_FORM } from './signin-forms';

// OpenAPI fragment of /signin: served as the route registers it (endpoint(…)); see api-documents.ts.

const signInPage: Record<number, ResponseDoc> = {
  200: htmlResponse('The page; again with a message when the form was refused (wrong password, a passkey that failed)'),
  302: redirectResponse('To the next step when there is nothing to ask'),
  303: redirectResponse('After a POST: to the consent page, back to the app, or to /account'),
};

export const signinDocs = {
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
} satisfies EndpointDocs;
