/**
 * The webhook event types and payment-request statuses, in one place: the transactions service writes and
 * filters events by them, and the identity service's developer portal offers them (its webhook forms'
 * checkboxes, its payment search). Data only; no service imports another.
 */

export const TRANSACTION_EVENT_TYPES = ['transaction.created', 'transaction.mined', 'transaction.failed'] as const;
export type TransactionEventType = (typeof TRANSACTION_EVENT_TYPES)[number];

/** The states of a payment request, each announced by the event of its name (payment_request.<status>). */
export const PAYMENT_REQUEST_STATUSES = [
  'pending',
  'detected',
  'paid',
  'paid_over',
  'underpaid',
  'paid_late',
  'expired',
  'failed',
  'canceled',
  'partially_refunded',
  'refunded',
] as const;
export type PaymentRequestStatus = (typeof PAYMENT_REQUEST_STATUSES)[number];

/**
 * payment_request.partially_refunded / .refunded: the app recorded a refund (data.refund), partial or reaching
 * what was paid. payment_request.pending: a detected payment's block was reorganised away (reason `reorganised`). */
export type PaymentRequestEventType = `payment_request.${PaymentRequestStatus | 'created'}`;
export const PAYMENT_REQUEST_EVENT_TYPES: PaymentRequestEventType[] = [
  'payment_request.created',
  ...PAYMENT_REQUEST_STATUSES.map((s): PaymentRequestEventType => `payment_request.${s}`),
];

export type WebhookEventType = TransactionEventType | PaymentRequestEventType;
export const WEBHOOK_EVENT_TYPES: WebhookEventType[] = [...TRANSACTION_EVENT_TYPES, ...PAYMENT_REQUEST_EVENT_TYPES];

/** Operational events: one of the app's endpoints is failing, or was disabled; sent to its other endpoints. */
export const ENDPOINT_EVENT_TYPES = ['webhook_endpoint.failing', 'webhook_endpoint.disabled'] as const;
export type EndpointEventType = (typeof ENDPOINT_EVENT_TYPES)[number];

/** Every type an endpoint's `enabled_events` (and the events list's `type`) may name, in the order shown. */
export const SUBSCRIBABLE_EVENT_TYPES: readonly string[] = [...WEBHOOK_EVENT_TYPES, ...ENDPOINT_EVENT_TYPES];

/** The families a `family.*` wildcard may name: transaction, payment_request, webhook_endpoint. */
export const EVENT_TYPE_FAMILIES: readonly string[] = [
  ...new Set(SUBSCRIBABLE_EVENT_TYPES.map((t) => t.slice(0, t.indexOf('.')))),
];
