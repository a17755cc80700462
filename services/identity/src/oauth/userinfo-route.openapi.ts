import { errorResponse, jsonResponse, type EndpointDocs, type OperationDoc } from '@attest/common';
import { dpopParameter, CORS_PREFLIGHT } from './oauth-openapi';

// OpenAPI fragment of /userinfo: served as the route registers it (endpoint(…)); see api-documents.ts.

export const userinfoDocs = {
  OPTIONS: CORS_PREFLIGHT,
  ...Object.fromEntries(
    (['GET', 'POST'] as const).map((method) => [
      method,
      {
        summary: method === 'GET' ? 'Claims of the approved scopes' : 'Claims of the approved scopes (POST)',
        tags: ['oidc'],
        security: [{ bearer: [] }, { dpop: [] }],
        parameters: [
          dpopParameter(
            `With Authorization: DPoP: a new proof by the token's key (htm ${method}, htu {base_url}/userinfo, ath)`,
          ),
        ],
        responses: {
          200: jsonResponse(
            'sub, {base_url}/v1, {base_url}/beta, email / name claims per scope, and acr, amr, auth_time when the claims parameter asked /userinfo for them',
            {
              type: 'object',
              required: ['sub'],
              properties: {
                sub: { type: 'string' },
                acr: { type: 'string' },
                amr: { type: 'array', items: { type: 'string' } },
                auth_time: { type: 'integer' },
              },
            },
          ),
          401: errorResponse(
            'unauthenticated, invalid_token (also a DPoP-bound token sent as Bearer), invalid_dpop_proof, ' +
              'use_dpop_nonce; a DPoP refusal has WWW-Authenticate: DPoP error=…, algs=… (RFC 9449 §7.1)',
          ),
        },
      } satisfies OperationDoc,
    ]),
  ),
} as EndpointDocs;
