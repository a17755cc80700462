import { htmlResponse, redirectResponse, type EndpointDocs } from '@attest/common';
import { FORM, pageError, pageFormErrors } from '../kernel/openapi-document';
import { INTERACTION_QUERY, CONSENT_FORM } from './oauth-forms';

// OpenAPI fragment of /consent: served as the route registers it (endpoint(…)); see api-documents.ts.

export const consentDocs = {
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
} satisfies EndpointDocs;
