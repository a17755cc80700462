import { bodyErrorResponses, errorResponse, jsonResponse, type EndpointDocs } from '@attest/common';
import { basicAuth, credentialErrors } from '../oauth';
import { FORM } from '../kernel/openapi-document';
import { BC_AUTHORIZE_FORM } from './ciba-forms';

// OpenAPI fragment of /bc-authorize (issue 42): served as the route registers it (endpoint(…)); see api-documents.ts.

export const bcAuthorizeDocs = {
  POST: {
    summary:
      'Ask a person to approve one action (CIBA Core 1.0 backchannel authentication, poll or ping mode, with ' +
      'RFC 9396 authorization_details); then poll /token with grant_type=urn:openid:params:grant-type:ciba',
    tags: ['oidc'],
    security: [...basicAuth, {}],
    body: { contentType: FORM, schema: BC_AUTHORIZE_FORM },
    responses: {
      200: jsonResponse('The request: its id (for /token), its lifetime and the least seconds between polls', {
        type: 'object',
        required: ['auth_req_id', 'expires_in', 'interval'],
        additionalProperties: false,
        properties: {
          auth_req_id: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          expires_in: { type: 'integer', minimum: 30, maximum: 1800 },
          interval: { type: 'integer', minimum: 1 },
        },
      }),
      ...bodyErrorResponses(
        'CIBA Core §13, as OAuth error / error_description: invalid_request (openid missing, no or two hints, ' +
          'a login_hint_token not made for this app, request sent, requested_expiry out of range, no client_notification_token in ping ' +
          'mode, a field given twice), invalid_scope, unknown_user_id (login_hint names nobody this app knows), ' +
          'expired_login_hint_token (past its 30 days), invalid_binding_message, invalid_authorization_details (an unknown type, a field missing or not ' +
          'understood), unauthorized_client (the app has no CIBA mode)',
      ),
      ...credentialErrors(' (OAuth error invalid_client): wrong or missing secret or client_assertion'),
      403: errorResponse(
        'access_denied: the person meets none of acr_values, or ended the app (under "Agents acting for you") ' +
          'after making its login_hint_token',
      ),
      429: {
        ...errorResponse(
          'too_many_requests (OAuth error temporarily_unavailable): five requests of this app already wait for ' +
            'this person (Retry-After), or too many wrong client credentials (Retry-After and the RateLimit fields)',
        ),
        headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } },
      },
    },
  },
} satisfies EndpointDocs;
