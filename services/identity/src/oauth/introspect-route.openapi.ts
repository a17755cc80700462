import { bodyErrorResponses, jsonResponse, type EndpointDocs } from '@attest/common';
import { FORM } from '../kernel/openapi-document';
import { basicAuth, credentialErrors } from './oauth-openapi';
import { INTROSPECT_FORM } from './oauth-forms';

// OpenAPI fragment of /introspect: served as the route registers it (endpoint(…)); see api-documents.ts.

const INTROSPECTION = {
  oneOf: [
    {
      type: 'object',
      required: ['active', 'client_id', 'exp', 'sub', 'scope', 'iat', 'token_type'],
      properties: {
        active: { const: true },
        client_id: { type: 'string' },
        exp: { type: 'integer' },
        sub: { type: 'string' },
        scope: { type: 'string' },
        iat: { type: 'integer' },
        token_type: { enum: ['Bearer', 'DPoP'] },
        cnf: {
          type: 'object',
          description: 'A DPoP-bound token (RFC 9449 §6.2): the RFC 7638 thumbprint of its key',
          required: ['jkt'],
          additionalProperties: false,
          properties: { jkt: { type: 'string' } },
        },
        acr: {
          type: 'string',
          description: 'The verification level of the sign-in: urn:attest:loa:orb or urn:attest:loa:device',
        },
        amr: { type: 'array', items: { type: 'string' }, description: 'RFC 8176 methods, e.g. pwd, hwk, user' },
        auth_time: { type: 'integer', description: 'When the person signed in (seconds since the epoch)' },
      },
    },
    {
      type: 'object',
      required: ['active'],
      additionalProperties: false,
      properties: { active: { const: false } },
    },
  ],
};

export const introspectDocs = {
  POST: {
    summary: 'Introspect an access token of the calling app',
    tags: ['oidc'],
    security: basicAuth,
    body: { contentType: FORM, schema: INTROSPECT_FORM },
    responses: {
      200: jsonResponse(
        '{active: true, client_id, exp, sub, scope, iat, token_type, acr, amr, auth_time, and cnf for a DPoP-bound token}, ' +
          'or {active: false} for a revoked token or another app’s',
        INTROSPECTION,
      ),
      ...bodyErrorResponses('invalid_content_type, required, invalid_request (client_id given twice)'),
      ...credentialErrors(', invalid_token (malformed, forged or expired)'),
    },
  },
} satisfies EndpointDocs;
