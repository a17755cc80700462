import { bodyErrorResponses, jsonResponse, type EndpointDocs } from '@attest/common';
import { FORM } from '../kernel/openapi-document';
import { basicAuth, credentialErrors } from '../oauth';
import { DEVICE_AUTHORIZATION_FORM } from './device-forms';

// OpenAPI fragment of /device_authorization: served as the route registers it (endpoint(…)); see api-documents.ts.

export const deviceAuthorizationDocs = {
  POST: {
    summary: 'Start the device flow (RFC 8628): a device code to poll /token with, a user code for the person',
    description:
      'For an app the device flow is enabled for (device_authorization_grant). The app authenticates as at /token ' +
      '(a public client by client_id). The person types user_code at verification_uri (or opens ' +
      'verification_uri_complete), signs in and approves; the app polls /token with grant_type ' +
      'urn:ietf:params:oauth:grant-type:device_code every `interval` seconds.',
    tags: ['oidc'],
    security: [...basicAuth, {}],
    body: { contentType: FORM, schema: DEVICE_AUTHORIZATION_FORM },
    responses: {
      200: jsonResponse('The codes (RFC 8628 §3.2)', {
        type: 'object',
        required: [
          'device_code',
          'user_code',
          'verification_uri',
          'verification_uri_complete',
          'expires_in',
          'interval',
        ],
        additionalProperties: false,
        properties: {
          device_code: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          user_code: { type: 'string', pattern: '^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$' },
          verification_uri: { type: 'string', format: 'uri' },
          verification_uri_complete: { type: 'string', format: 'uri' },
          expires_in: { type: 'integer', description: 'DEVICE_CODE_TTL_SECONDS' },
          interval: { type: 'integer', description: 'Seconds between polls' },
        },
      }),
      ...bodyErrorResponses(
        'invalid_request (a parameter refused or given twice), unauthorized_client (the device flow is not enabled ' +
          'for the app), invalid_scope, invalid_target; all with OAuth error / error_description',
      ),
      ...credentialErrors(' (OAuth error invalid_client): wrong secret or client_assertion'),
    },
  },
} satisfies EndpointDocs;
