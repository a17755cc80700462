import { eventBody, newMessageId, type TransactionEventType, type WebhookEvent } from '../kernel/events';
import type { Transaction, TransactionStatus } from '../kernel/transaction';
import { toSpec } from './transaction-spec';

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
