import {
  countedErrorResponse,
  ERROR_SCHEMA,
  errorResponse,
  tooManyRequestsResponse,
  type OpenApiDocument,
} from '@attest/common';

const ADDRESS = {
  type: 'string',
  pattern: '^0x[0-9a-fA-F]{40}$',
  description: 'Lower case, or with a valid EIP-55 checksum',
};

const STATUS_REASON = {
  description:
    'Only on a failed transaction the chain watcher failed: reverted, wrong_token, wrong_recipient, wrong_sender, wrong_amount, unknown_token or dropped',
  schema: { type: 'string' },
};

const recordedResponse = (description: string) => ({
  description,
  content: {
    'application/json': {
      schema: {
        allOf: [
          {
            type: 'object',
            required: ['transaction_id'],
            properties: { transaction_id: { type: 'string', pattern: '^0x[0-9a-f]{64}$' } },
          },
          { $ref: '#/components/schemas/Transaction' },
        ],
      },
    },
  },
});

/** The transaction lookup (SPEC §4.7), and recording a payment. */
export function transactionsOpenApi(apiUrl: string): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Attest transactions',
      version: '2',
      description: 'Did this payment go through? Look up an app’s payment or transaction by id.',
    },
    servers: [{ url: apiUrl }],
    paths: {
      '/api/v2/client/transaction/{transaction_id}': {
        get: {
          summary: 'Current status of a payment or transaction of your app',
          security: [{ apiKey: [] }],
          parameters: [
            {
              name: 'transaction_id',
              in: 'path',
              required: true,
              schema: { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' },
            },
            { name: 'app_id', in: 'query', required: true, schema: { type: 'string' } },
            {
              name: 'type',
              in: 'query',
              required: true,
              schema: { enum: ['pay', 'sendTransaction', 'payment', 'transaction'] },
            },
          ],
          responses: {
            200: {
              description: 'The transaction',
              headers: { 'Transaction-Status-Reason': STATUS_REASON },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Transaction' } } },
            },
            400: errorResponse(
              'required (app_id, type) or invalid_parameter (type, transaction_id, also malformed percent-encoding)',
            ),
            401: countedErrorResponse('unauthenticated: no, malformed, unknown or revoked API key'),
            403: errorResponse('invalid_app: the API key belongs to another app than app_id'),
            404: errorResponse('not_found: no such transaction for this app and type'),
            429: tooManyRequestsResponse('unknown or revoked API keys'),
          },
        },
      },
      '/api/v2/client/transaction': {
        post: {
          summary: 'Record a payment or transaction your app sent, for the chain watcher to verify',
          description:
            'Stored pending. It becomes mined only when a final block holds a successful transaction with a Transfer of the ' +
            'configured token contract (or a native transfer) from `from` to `to` of exactly `token_amount`; otherwise failed, ' +
            'with the reason in the Transaction-Status-Reason header of the lookup. Idempotent per (app_id, reference).',
          security: [{ apiKey: [] }],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  additionalProperties: false,
                  required: [
                    'app_id',
                    'type',
                    'reference',
                    'transaction_hash',
                    'chain',
                    'token',
                    'to',
                    'token_amount',
                    'from',
                  ],
                  properties: {
                    app_id: {
                      type: 'string',
                      pattern: '^app_[0-9a-f]{32}$',
                      description: 'Your app; the API key must be one of its keys',
                    },
                    type: { enum: ['pay', 'sendTransaction'] },
                    reference: {
                      type: 'string',
                      minLength: 1,
                      maxLength: 200,
                      description: 'Your identifier, unique per app (the idempotency key)',
                    },
                    transaction_hash: { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' },
                    chain: { type: 'string', description: 'A chain name configured in CHAIN_TOKENS, e.g. worldchain' },
                    token: { type: 'string', description: 'A token code configured for that chain, e.g. USDCE, WLD' },
                    to: ADDRESS,
                    token_amount: {
                      type: 'string',
                      pattern: '^\\d{1,78}$',
                      description: 'Integer: the amount × 10^6, whatever the token’s decimals',
                    },
                    from: ADDRESS,
                  },
                },
              },
            },
          },
          responses: {
            201: recordedResponse('Recorded, pending'),
            200: recordedResponse('The same record again: the transaction already recorded, as it is now'),
            400: errorResponse(
              'invalid_content_type (not application/json), invalid_body, required or invalid_parameter naming the field (also an unknown chain or token)',
            ),
            401: countedErrorResponse('unauthenticated: no, malformed, unknown or revoked API key'),
            403: errorResponse('invalid_app: the API key belongs to another app than app_id'),
            409: errorResponse(
              'reference_taken: this app recorded the reference with different values; attribute names the first field that differs',
            ),
            413: errorResponse('payload_too_large'),
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
