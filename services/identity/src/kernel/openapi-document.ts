import { type ResponseDoc } from '@attest/common';

// OpenAPI pieces every feature's pages share (form bodies, page errors); each endpoint's fragment lives beside its route.

export const FORM = 'application/x-www-form-urlencoded';

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
