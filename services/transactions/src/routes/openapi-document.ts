import {
  countedErrorResponse,
  errorResponse,
  tooManyRequestsResponse,
  type ApiInfo,
  type ResponseDoc,
} from '@attest/common';

/** The public API's document: info and shared components; the operations come from the routes. */
export function transactionsApi(apiUrl: string): ApiInfo {
  return {
    title: 'Attest transactions',
    version: '2',
    description: 'Did this payment go through? Look up an app’s payment or transaction by id.',
    serverUrl: apiUrl,
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'api_…' } },
      schemas: {
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

/** The answers of the API-key check every app endpoint starts with. */
export const apiKeyResponses: Record<number, ResponseDoc> = {
  401: countedErrorResponse(
    'unauthenticated: no, malformed, unknown or revoked API key, or the key of an app an operator disabled (not counted)',
  ),
  403: errorResponse('invalid_app: the API key belongs to another app than app_id'),
  429: tooManyRequestsResponse('unknown or revoked API keys'),
};
