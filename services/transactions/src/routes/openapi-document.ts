import {
  countedErrorResponse,
  errorResponse,
  tooManyRequestsResponse,
  type ApiInfo,
  type JsonSchema,
  type ResponseDoc,
} from '@attest/common';
import {
  DELIVERY_PROPERTIES,
  DELIVERY_WITH_LOG,
  EVENT_SCHEMA,
  object,
  WEBHOOK_PROPERTIES,
} from '../admin/admin-document';

/** The public API's document: info and shared components; the operations come from the routes. */
export function transactionsApi(apiUrl: string): ApiInfo {
  return {
    title: 'Attest transactions',
    version: '2',
    description:
      'Did this payment go through? Look up an app’s payment or transaction by id; manage your webhook endpoints and ' +
      'read your events (GET /api/v2/client/events) with your API key.',
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
        WebhookEndpoint: object(WEBHOOK_PROPERTIES),
        RemovedWebhookEndpoint: object({ ...WEBHOOK_PROPERTIES, removed: { const: true } }),
        WebhookEndpointWithSecret: object({
          ...WEBHOOK_PROPERTIES,
          secret: { type: 'string', description: 'The signing secret (whsec_…), shown once' },
        }),
        WebhookDelivery: object(DELIVERY_PROPERTIES),
        WebhookDeliveryWithLog: DELIVERY_WITH_LOG,
        Event: EVENT_SCHEMA,
        EventPage: object({
          data: { type: 'array', items: ref('Event'), description: 'Oldest first' },
          has_more: { type: 'boolean', description: 'More events follow: ask again with after=next_after' },
          next_after: {
            type: ['string', 'null'],
            description: 'The cursor of the next page: the last event_id of this one (the given after when empty)',
          },
        }),
      },
    },
  };
}

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** The shapes of the webhook and event operations. */
export const publicSchemas = {
  webhook: ref('WebhookEndpoint'),
  removedWebhook: ref('RemovedWebhookEndpoint'),
  webhookWithSecret: ref('WebhookEndpointWithSecret'),
  delivery: ref('WebhookDelivery'),
  deliveryWithLog: ref('WebhookDeliveryWithLog'),
  event: ref('Event'),
  eventPage: ref('EventPage'),
};

/** The answers of the API-key check every app endpoint starts with. */
export const apiKeyResponses: Record<number, ResponseDoc> = {
  401: countedErrorResponse(
    'unauthenticated: no, malformed, unknown or revoked API key, or the key of an app an operator disabled (not counted)',
  ),
  403: errorResponse('invalid_app: the API key belongs to another app than app_id'),
  429: tooManyRequestsResponse('unknown or revoked API keys'),
};
