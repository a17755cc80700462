import { randomBytes } from 'node:crypto';
import type { Transaction, TransactionStatus } from '../store/transaction-store';
import type { WebhookEvent } from '../store/webhook-store';
import { toSpec } from './transaction-spec';

export type WebhookEventType = 'transaction.created' | 'transaction.mined' | 'transaction.failed';
export const WEBHOOK_EVENT_TYPES: WebhookEventType[] = [
  'transaction.created',
  'transaction.mined',
  'transaction.failed',
];

/** The message id, sent as `webhook-id`: the same on every attempt, redelivery and replay. */
export const newMessageId = () => `msg_${randomBytes(16).toString('hex')}`;

const STATUS_EVENT: Record<TransactionStatus, WebhookEventType | null> = {
  pending: null,
  mined: 'transaction.mined',
  failed: 'transaction.failed',
};

/** `data` is the transaction as the lookup answers it, with its id, and on a failed one the reason (the lookup's Transaction-Status-Reason). */
function event(type: WebhookEventType, t: Transaction, at: Date): WebhookEvent {
  const reason = t.statusReason ? { status_reason: t.statusReason } : {};
  const body = JSON.stringify({
    type,
    timestamp: at.toISOString(),
    data: { transaction_id: t.id, ...toSpec(t), ...reason },
  });
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
