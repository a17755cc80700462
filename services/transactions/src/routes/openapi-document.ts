import {
  countedErrorResponse,
  ERROR_SCHEMA,
  errorResponse,
  tooManyRequestsResponse,
  type OpenApiDocument,
} from '@attest/common';

/** The transaction lookup (SPEC §4.7). */
export function transactionsOpenApi(apiUrl: string): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: { title: 'Attest transactions', version: '2', description: 'Did this payment go through? Look up an app’s payment or transaction by id.' },
    servers: [{ url: apiUrl }],
    paths: {
      '/api/v2/client/transaction/{transaction_id}': {
        get: {
          summary: 'Current status of a payment or transaction of your app',
          security: [{ apiKey: [] }],
          parameters: [
            { name: 'transaction_id', in: 'path', required: true, schema: { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' } },
            { name: 'app_id', in: 'query', required: true, schema: { type: 'string' } },
            { name: 'type', in: 'query', required: true, schema: { enum: ['pay', 'sendTransaction', 'payment', 'transaction'] } },
          ],
          responses: {
            200: { description: 'The transaction', content: { 'application/json': { schema: { $ref: '#/components/schemas/Transaction' } } } },
            400: errorResponse('required (app_id, type) or invalid_parameter (type, transaction_id, also malformed percent-encoding)'),
            401: countedErrorResponse('unauthenticated: no, malformed, unknown or revoked API key'),
            403: errorResponse('invalid_app: the API key belongs to another app than app_id'),
            404: errorResponse('not_found: no such transaction for this app and type'),
            429: tooManyRequestsResponse('unknown or revoked API keys'),
          },
        },
      },
    },
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'api_…' } },
      schemas: {
        Error: ERROR_SCHEMA,
        Transaction: {
          type: 'object',
          properties: {
            reference: { type: 'string' },
            transaction_hash: { type: ['string', 'null'] },
            transaction_status: { enum: ['pending', 'mined', 'failed'] },
            from: { type: 'string' },
            chain: { type: 'string' },
            timestamp: { type: 'string', format: 'date-time' },
            token_amount: { type: 'string', pattern: '^\\d+$', description: 'Integer: the amount × 10^6' },
            token: { type: 'string' },
            to: { type: 'string' },
            app_id: { type: 'string' },
          },
        },
      },
    },
  };
}
