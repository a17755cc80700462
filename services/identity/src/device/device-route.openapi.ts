import { htmlResponse, redirectResponse, type EndpointDocs } from '@attest/common';
import { FORM, pageError, pageFormErrors } from '../kernel/openapi-document';
import { DEVICE_FORM, DEVICE_QUERY } from './device-forms';

// OpenAPI fragment of /device: served as the route registers it (endpoint(…)); see api-documents.ts.

export const deviceDocs = {
  GET: {
    summary: 'The device page (RFC 8628 verification_uri): type the code, then allow or deny the device',
    tags: ['pages'],
    query: DEVICE_QUERY,
    responses: {
      200: htmlResponse(
        'The page: the code to type (pre-filled from verification_uri_complete), or, signed in, which app asks for what',
      ),
      400: pageError('The page again: a code that is not valid (counted against the address)'),
      403: pageError('unmet_authentication_requirements: the person is below the level asked for (a page)'),
      429: pageError('Too many wrong codes from this address; with Retry-After and the RateLimit fields'),
    },
  },
  POST: {
    summary: 'The device form: decision=confirm (the code typed), approve or deny',
    tags: ['pages'],
    body: { contentType: FORM, schema: DEVICE_FORM },
    responses: {
      200: htmlResponse('The device is allowed or denied'),
      303: redirectResponse('To /signin (next=device) when not signed in, or to the page of the confirmed code'),
      ...pageFormErrors('The page again: a code that is not valid (counted against the address); invalid_parameter'),
      429: pageError('Too many wrong codes from this address; with Retry-After and the RateLimit fields'),
    },
  },
} satisfies EndpointDocs;
