import { DATE_TIME, NULLABLE_DATE_TIME, type JsonSchema } from '@attest/common';
import { nullableString, object, ref } from '../kernel/openapi';

const WEBHOOK_PROPERTIES: Record<string, JsonSchema> = {
  webhook_id: { type: 'string', pattern: '^wh_[0-9a-f]{32}$' },
  app_id: { type: 'string' },
  url: { type: 'string' },
  description: nullableString,
  enabled_events: {
    type: 'array',
    items: { type: 'string' },
    description: 'The event types (or family.* wildcards) sent to it; empty: every type',
  },
  status: {
    enum: ['enabled', 'failing', 'disabled'],
    description: 'failing: its last attempt failed (since failing_since); disabled: nothing is sent to it',
  },
  created_at: DATE_TIME,
  previous_secret_expires_at: {
    ...NULLABLE_DATE_TIME,
    description: 'Until then, deliveries are signed with the previous secret too (after a rotation)',
  },
  failing_since: NULLABLE_DATE_TIME,
  consecutive_failures: {
    type: 'integer',
    minimum: 0,
    description:
      'Failed attempts in a row (429/502/503/504 not counted); at 5, or when a delivery gives up, it is reported failing',
  },
  throttled_until: {
    ...NULLABLE_DATE_TIME,
    description: 'A 429/502/503/504 (with its Retry-After) paused every delivery to it until then',
  },
  disabled_at: NULLABLE_DATE_TIME,
  disabled_reason: nullableString,
};

const DELIVERY_PROPERTIES: Record<string, JsonSchema> = {
  delivery_id: { type: 'string', pattern: '^whd_[0-9a-f]{32}$' },
  webhook_id: { type: 'string' },
  event_id: { type: 'string' },
  event_type: { type: 'string' },
  status: { enum: ['pending', 'succeeded', 'failed'] },
  attempts: { type: 'integer', minimum: 0 },
  next_attempt_at: { ...NULLABLE_DATE_TIME, description: 'While pending' },
  last_status_code: { type: ['integer', 'null'] },
  last_error: nullableString,
  created_at: DATE_TIME,
  finished_at: NULLABLE_DATE_TIME,
};

/** A delivery with every attempt: when, the answer's status or the error, how long it took, the bodies (truncated). */
const DELIVERY_WITH_LOG = object({
  ...DELIVERY_PROPERTIES,
  log: {
    type: 'array',
    items: object({
      attempt: { type: 'integer', minimum: 1 },
      started_at: DATE_TIME,
      status_code: { type: ['integer', 'null'] },
      error: nullableString,
      latency_ms: { type: 'integer', minimum: 0, description: 'How long the attempt took, milliseconds' },
      request_body: {
        type: 'string',
        description:
          'The body sent (the event payload, the same on every attempt), its first 4096 characters; no header (the signature) is shown',
      },
      request_body_truncated: { type: 'boolean', description: 'The body sent was longer than request_body' },
      response_body: {
        ...nullableString,
        description: 'The first 4096 bytes of the endpoint’s answer, as text; null: no answer (an error before it)',
      },
      response_body_truncated: { type: 'boolean', description: 'The answer was longer than response_body' },
    }),
  },
});

/** An event of the events list: the payload exactly as its endpoints are sent it. */
const EVENT_SCHEMA = object({
  event_id: { type: 'string', description: 'The webhook-id header its deliveries carry' },
  type: { type: 'string' },
  created_at: DATE_TIME,
  payload: {
    type: 'object',
    required: ['version', 'type', 'timestamp', 'data'],
    description: 'The payload exactly as delivered: version, type, timestamp, data',
    properties: {
      version: { type: 'string' },
      type: { type: 'string' },
      timestamp: DATE_TIME,
      data: { type: 'object' },
    },
  },
});

/** A page of the events list. */
const EVENT_PAGE = object({
  data: { type: 'array', items: ref('Event'), description: 'Oldest first' },
  has_more: { type: 'boolean', description: 'More events follow: ask again with cursor=next_cursor' },
  next_cursor: {
    type: ['string', 'null'],
    description:
      'The cursor of the next page: the last event_id of this one (the given cursor when empty; kept for polling at the end)',
  },
  next_after: { type: ['string', 'null'], description: 'The same as next_cursor, under its older name' },
});

/** The public document's schemas of webhook endpoints, deliveries and events. */
export const webhookPublicComponents: Record<string, JsonSchema> = {
  WebhookEndpoint: object(WEBHOOK_PROPERTIES),
  RemovedWebhookEndpoint: object({ ...WEBHOOK_PROPERTIES, removed: { const: true } }),
  WebhookEndpointWithSecret: object({
    ...WEBHOOK_PROPERTIES,
    secret: { type: 'string', description: 'The signing secret (whsec_…), shown once' },
  }),
  WebhookDelivery: object(DELIVERY_PROPERTIES),
  WebhookDeliveryWithLog: DELIVERY_WITH_LOG,
  Event: EVENT_SCHEMA,
  EventPage: EVENT_PAGE,
};

/** The admin document's schemas of webhook endpoints. */
export const webhookAdminComponents: Record<string, JsonSchema> = {
  Webhook: object(WEBHOOK_PROPERTIES),
  RemovedWebhook: object({ ...WEBHOOK_PROPERTIES, removed: { const: true } }),
  WebhookWithSecret: object({
    ...WEBHOOK_PROPERTIES,
    secret: { type: 'string', description: 'The signing secret, shown once' },
  }),
};

/** The admin document's schemas of deliveries and events. */
export const deliveryAdminComponents: Record<string, JsonSchema> = {
  Delivery: object(DELIVERY_PROPERTIES),
  DeliveryWithLog: DELIVERY_WITH_LOG,
  Event: EVENT_SCHEMA,
  EventPage: EVENT_PAGE,
};

/** The shapes of the app API's webhook and event operations. */
export const publicSchemas = {
  webhook: ref('WebhookEndpoint'),
  removedWebhook: ref('RemovedWebhookEndpoint'),
  webhookWithSecret: ref('WebhookEndpointWithSecret'),
  delivery: ref('WebhookDelivery'),
  deliveryWithLog: ref('WebhookDeliveryWithLog'),
  event: ref('Event'),
  eventPage: ref('EventPage'),
};

/** The shapes of the admin API's webhook and event operations. */
export const adminSchemas = {
  webhook: ref('Webhook'),
  removedWebhook: ref('RemovedWebhook'),
  webhookWithSecret: ref('WebhookWithSecret'),
  delivery: ref('Delivery'),
  deliveryWithLog: ref('DeliveryWithLog'),
  eventPage: ref('EventPage'),
};

/** The 202 answer of "send a test event", in the app API and the admin API alike. */
export const testEventQueued = {
  type: 'object',
  required: ['webhook_id', 'event_id', 'type'],
  additionalProperties: false,
  properties: {
    webhook_id: { type: 'string' },
    event_id: { type: 'string', description: 'The webhook-id header of its delivery' },
    type: { const: 'webhook.test' },
  },
} as const;

/** The 202 answer of "recover the failed deliveries" of one endpoint, in the app API and the admin API alike. */
export const recoverQueued = {
  type: 'object',
  required: ['webhook_id', 'since', 'deliveries'],
  additionalProperties: false,
  properties: {
    webhook_id: { type: 'string' },
    since: { type: 'string', format: 'date-time' },
    deliveries: { type: 'integer', minimum: 0, description: 'Deliveries queued' },
  },
};
