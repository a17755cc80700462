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
        iss: { type: 'string', description: 'A resource server’s answer: the issuer' },
        aud: { type: 'string', description: 'A resource server’s answer: its own uri (RFC 8707)' },
        jti: { type: 'string', description: 'A resource server’s answer: the token’s id' },
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
        authorization_details: {
          type: 'array',
          items: { type: 'object' },
          description: 'RFC 9396 §9.2: what the person approved (a CIBA grant’s token; issue 42)',
        },
        act: { $ref: '#/components/schemas/Actor' },
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
    summary: 'Introspect an access token of the calling app, or (a resource server) of a token for it',
    description:
      'An app authenticates as at /token and learns about its own tokens; a malformed, forged or expired token is 401 ' +
      'invalid_token for it. A resource server authenticates with Basic base64(resource_id:introspection_secret) and ' +
      'learns about tokens whose aud is it (RFC 8707); for it, RFC 7662 §2.2 holds: anything else is 200 {active: false}.',
    tags: ['oidc'],
    security: basicAuth,
    body: { contentType: FORM, schema: INTROSPECT_FORM },
    responses: {
      200: jsonResponse(
        '{active: true, client_id, exp, sub, scope, iat, token_type, acr, amr, auth_time, cnf for a DPoP-bound token, ' +
          'act for a delegated one (token exchange)}, ' +
          'or {active: false} for a revoked token or another app’s; a resource server also gets iss, aud and jti, ' +
          'and {active: false} for every token that is not an active one for it',
        INTROSPECTION,
      ),
      ...bodyErrorResponses('invalid_content_type, required, invalid_request (client_id given twice)'),
      ...credentialErrors(', invalid_token (malformed, forged or expired)'),
    },
  },
} satisfies EndpointDocs;
