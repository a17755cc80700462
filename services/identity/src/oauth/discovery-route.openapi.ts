import { emptyResponse, jsonResponse, type EndpointDocs } from '@attest/common';
import { CORS_PREFLIGHT } from './oauth-openapi';

// OpenAPI fragment of /.well-known/openid-configuration: served as the route registers it (endpoint(…)); see api-documents.ts.

export const discoveryDocs = {
  GET: {
    summary: 'Discovery document',
    tags: ['oidc'],
    responses: {
      200: jsonResponse('OpenID Provider metadata (ETag; 304 on a match)', {
        type: 'object',
        required: ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri'],
      }),
      304: emptyResponse('Not modified (If-None-Match)'),
    },
  },
  OPTIONS: CORS_PREFLIGHT,
} satisfies EndpointDocs;
