import { DATE_TIME, NULLABLE_DATE_TIME, type ApiInfo, type JsonSchema } from '@attest/common';

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const nullableString: JsonSchema = { type: ['string', 'null'] };

export const object = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({
  type: 'object',
  required,
  additionalProperties: false,
  properties,
});

const TRANSACTION_STATUS: JsonSchema = { enum: ['pending', 'mined', 'failed'] };

/** A transaction as the public lookup answers it (SPEC names), with its id and type. */
const TRANSACTION_PROPERTIES: Record<string, JsonSchema> = {
  transaction_id: { type: 'string', pattern: '^0x[0-9a-f]{64}$' },
  type: { enum: ['pay', 'sendTransaction'] },
  reference: { type: 'string' },
  transaction_hash: nullableString,
  transaction_status: TRANSACTION_STATUS,
  from: { type: 'string' },
  chain: { type: 'string' },
  timestamp: { ...DATE_TIME, description: 'When it was recorded' },
  token_amount: { type: 'string', pattern: '^\\d+$', description: 'Integer: the amount × 10^6' },
  token: { type: 'string' },
  to: { type: 'string' },
  app_id: { type: 'string' },
};

const API_KEY_PROPERTIES: Record<string, JsonSchema> = {
  key_id: { type: 'string' },
  app_id: { type: 'string' },
  name: nullableString,
  created_at: DATE_TIME,
  last_used_at: NULLABLE_DATE_TIME,
  revoked_at: NULLABLE_DATE_TIME,
};

export const WEBHOOK_PROPERTIES: Record<string, JsonSchema> = {
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

export const DELIVERY_PROPERTIES: Record<string, JsonSchema> = {
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

/** A delivery with every attempt: when, the answer's status or the error, how long it took. */
export const DELIVERY_WITH_LOG = object({
  ...DELIVERY_PROPERTIES,
  log: {
    type: 'array',
    items: object({
      attempt: { type: 'integer', minimum: 1 },
      started_at: DATE_TIME,
      status_code: { type: ['integer', 'null'] },
      error: nullableString,
      latency_ms: { type: 'integer', minimum: 0 },
    }),
  },
});

/** An event of the events list: the payload exactly as its endpoints are sent it. */
export const EVENT_SCHEMA = object({
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

/** The transactions admin API's document: info and the shapes its operations answer with. */
export function transactionsAdminApi(): ApiInfo {
  return {
    title: 'Attest transactions admin API',
    version: '1',
    description:
      'API keys, transactions recorded and moved by hand, webhook endpoints and their deliveries, the audit ' +
      'trail and admin tokens. Every /admin operation needs an admin token (Authorization: Bearer).',
    serverUrl: '/',
    components: {
      schemas: {
        Transaction: object(TRANSACTION_PROPERTIES),
        ListedTransaction: object({ ...TRANSACTION_PROPERTIES, updated_at: DATE_TIME }),
        TransactionWithHistory: object({
          ...TRANSACTION_PROPERTIES,
          status_reason: { ...nullableString, description: 'Why it has its status, when known' },
          history: {
            type: 'array',
            items: object({
              from_status: { enum: ['pending', 'mined', 'failed', null], description: 'null: when it was recorded' },
              to_status: TRANSACTION_STATUS,
              source: { type: 'string', description: 'admin, api, or chain:<network>' },
              reason: nullableString,
              reason_detail: nullableString,
              changed_at: DATE_TIME,
            }),
          },
        }),
        ApiKey: object(API_KEY_PROPERTIES),
        NewApiKey: object({
          api_key: { type: 'string', description: 'Shown once; only its hash is kept' },
          ...API_KEY_PROPERTIES,
        }),
        Webhook: object(WEBHOOK_PROPERTIES),
        RemovedWebhook: object({ ...WEBHOOK_PROPERTIES, removed: { const: true } }),
        WebhookWithSecret: object({
          ...WEBHOOK_PROPERTIES,
          secret: { type: 'string', description: 'The signing secret, shown once' },
        }),
        AppStatus: object({
          app_id: { type: 'string' },
          disabled: { type: 'boolean', description: 'Its API keys get 401 and its webhooks wait while true' },
          disabled_at: NULLABLE_DATE_TIME,
        }),
        Delivery: object(DELIVERY_PROPERTIES),
        DeliveryWithLog: DELIVERY_WITH_LOG,
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

export const transactionsSchemas = {
  transaction: ref('Transaction'),
  listedTransaction: ref('ListedTransaction'),
  transactionWithHistory: ref('TransactionWithHistory'),
  apiKey: ref('ApiKey'),
  newApiKey: ref('NewApiKey'),
  webhook: ref('Webhook'),
  removedWebhook: ref('RemovedWebhook'),
  webhookWithSecret: ref('WebhookWithSecret'),
  delivery: ref('Delivery'),
  deliveryWithLog: ref('DeliveryWithLog'),
  appStatus: ref('AppStatus'),
  eventPage: ref('EventPage'),
};
