import { emptyResponse, jsonResponse, type EndpointDocs } from '@attest/common';
import { CORS_PREFLIGHT } from '../oauth';

// OpenAPI fragment of /.well-known/oauth-authorization-server: served as the route registers it (endpoint(…)).

export const authorizationServerDocs = {
  GET: {
    summary: 'OAuth 2.0 Authorization Server Metadata (RFC 8414)',
    description:
      'The discovery document’s metadata (the same issuer and endpoints), with registration_endpoint (unless ' +
      'CLIENT_REGISTRATION is off) and client_id_metadata_document_supported: what MCP clients and agents read.',
    tags: ['registration'],
    responses: {
      200: jsonResponse('Authorization server metadata (ETag; 304 on a match)', {
        type: 'object',
        required: [
          'issuer',
          'authorization_endpoint',
          'token_endpoint',
          'jwks_uri',
          'response_types_supported',
          'code_challenge_methods_supported',
          'client_id_metadata_document_supported',
        ],
        properties: {
          issuer: { type: 'string' },
          registration_endpoint: { type: 'string' },
          client_id_metadata_document_supported: { type: 'boolean' },
          code_challenge_methods_supported: { type: 'array', items: { enum: ['S256'] } },
        },
      }),
      304: emptyResponse('Not modified (If-None-Match)'),
    },
  },
  OPTIONS: CORS_PREFLIGHT,
} satisfies EndpointDocs;
