import { htmlResponse, redirectResponse, type EndpointDocs, type ResponseDoc } from '@attest/common';
import { FORM, pageError } from '../kernel/openapi-document';
import { AUTHORIZE_PARAMETERS } from '../kernel/authorize-parameters';

// OpenAPI fragment of /authorize: served as the route registers it (endpoint(…)); see api-documents.ts.

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

export const authorizeDocs = {
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
} satisfies EndpointDocs;
