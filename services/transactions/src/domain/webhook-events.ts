import { randomBytes } from 'node:crypto';
import type { Transaction, TransactionStatus } from '../store/transaction-store';
import type { WebhookEvent } from '../store/webhook-store';
import { toSpec } from './transaction-spec';
import { eventBody } from './webhook-payload';

export type TransactionEventType = 'transaction.created' | 'transaction.mined' | 'transaction.failed';
export type WebhookEventType = TransactionEventType | PaymentRequestEventType;
export const WEBHOOK_EVENT_TYPES: WebhookEventType[] = [
  'transaction.created',
  'transaction.mined',
  'transaction.failed',
  'payment_request.created',
  'payment_request.pending',
  'payment_request.detected',
  'payment_request.paid',
  'payment_request.paid_over',
  'payment_request.underpaid',
  'payment_request.paid_late',
  'payment_request.expired',
  'payment_request.failed',
];

/** The message id, sent as `webhook-id`: the same on every attempt, redelivery and replay. */
export const newMessageId = () => `msg_${randomBytes(16).toString('hex')}`;

const STATUS_EVENT: Record<TransactionStatus, TransactionEventType | null> = {
  pending: null,
  mined: 'transaction.mined',
  failed: 'transaction.failed',
};

/**
 * `data` is the transaction as the lookup answers it (its amount in token_amount), with its id and the
 * reason for its status (the lookup's Transaction-Status-Reason; null while there is none), so a receiver
 * needs no header to learn why.
 */
function event(type: TransactionEventType, t: Transaction, at: Date): WebhookEvent {
  const body = eventBody(type, at, { transaction_id: t.id, ...toSpec(t), status_reason: t.statusReason ?? null });
  return { id: newMessageId(), appId: t.appId, type, transactionId: t.id, body };
}

/**
 * The events of one committed change: a new transaction is `transaction.created` (followed by its final
 * state's event when it was recorded already mined or failed); a status change is that status's event.
 */
export function transactionEvents(t: Transaction, change: 'created' | 'status'): WebhookEvent[] {
  const statusEvent = STATUS_EVENT[t.status];
  if (change === 'created')
    return [event('transaction.created', t, t.createdAt), ...(statusEvent ? [event(statusEvent, t, t.createdAt)] : [])];
  return statusEvent ? [event(statusEvent, t, t.updatedAt)] : [];
}

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
] as const;
export type PaymentRequestStatus = (typeof PAYMENT_REQUEST_STATUSES)[number];

/** payment_request.pending: a detected payment's block was reorganised away (reason `reorganised`). */
export type PaymentRequestEventType = `payment_request.${PaymentRequestStatus | 'created'}`;
export const PAYMENT_REQUEST_EVENT_TYPES: PaymentRequestEventType[] = [
  'payment_request.created',
  'payment_request.pending',
  'payment_request.detected',
  'payment_request.paid',
  'payment_request.paid_over',
  'payment_request.underpaid',
  'payment_request.paid_late',
  'payment_request.expired',
  'payment_request.failed',
];

/**
 * A payment_request.* event: `data` is the request as GET /api/v2/client/payment-requests/{id} answers it
 * (status, reason, amount_due, amount_paid, …), so a receiver needs no header to learn why.
 */
export function paymentRequestEvent(
  type: PaymentRequestEventType,
  request: { id: string; appId: string },
  data: Record<string, unknown>,
  at: Date,
): WebhookEvent {
  const body = eventBody(type, at, data);
  return { id: newMessageId(), appId: request.appId, type, transactionId: null, paymentRequestId: request.id, body };
}
