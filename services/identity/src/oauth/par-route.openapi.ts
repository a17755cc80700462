import { bodyErrorResponses, jsonResponse, type EndpointDocs } from '@attest/common';
import { FORM } from '../kernel/openapi-document';
import { dpopParameter, DPOP_NONCE_HEADER, basicAuth, credentialErrors } from './oauth-openapi';
import { PAR_FORM } from './oauth-forms';

// OpenAPI fragment of /par: served as the route registers it (endpoint(…)); see api-documents.ts.

export const parDocs = {
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
} satisfies EndpointDocs;
