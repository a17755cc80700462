import { emptyResponse, jsonResponse, type EndpointDocs } from '@attest/common';
import { CORS_PREFLIGHT } from './oauth-openapi';

// OpenAPI fragment of /jwks: served as the route registers it (endpoint(…)); see api-documents.ts.

export const jwksDocs = {
  GET: {
    summary: 'Public signing keys (also at /jwks.json)',
    tags: ['oidc'],
    responses: {
      200: jsonResponse('JWK Set of RS256 keys with kid, alg, use', {
        type: 'object',
        required: ['keys'],
        properties: {
          keys: {
            type: 'array',
            items: { type: 'object', required: ['kty', 'kid'], properties: { kid: { type: 'string' } } },
          },
        },
      }),
      304: emptyResponse('Not modified (If-None-Match)'),
    },
  },
  OPTIONS: CORS_PREFLIGHT,
} satisfies EndpointDocs;
