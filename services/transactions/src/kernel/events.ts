import { randomBytes } from 'node:crypto';
import type { Queryable } from '@attest/common';

/**
 * The events every feature writes to the webhook outbox: their types, payload and message id. A leaf: the
 * transactions and payment requests write their events through an OutboxWrite the webhooks feature provides.
 */

/**
 * The payload version, the first field of every payload. It changes only when a field changes meaning
 * or goes away; new fields come without a new version (receivers must ignore fields they do not know).
 */
export const WEBHOOK_PAYLOAD_VERSION = '2026-11-27';

/** A payload: version, type, timestamp, then the type's own fields (`data`, and `test` on a test event). */
export function eventBody(type: string, at: Date, data: Record<string, unknown>, extra: { test?: true } = {}): string {
  return JSON.stringify({ version: WEBHOOK_PAYLOAD_VERSION, type, timestamp: at.toISOString(), ...extra, data });
}

/** The message id, sent as `webhook-id`: the same on every attempt, redelivery and replay. */
export const newMessageId = () => `msg_${randomBytes(16).toString('hex')}`;

export interface WebhookEvent {
  id: string;
  appId: string;
  type: string;
  /** The transaction it is about; null for events about no transaction (payment requests, test, endpoint notifications). */
  transactionId: string | null;
  /** The payment request the event is about (payment_request.* events). */
  paymentRequestId?: string | null;
  body: string;
}

/**
 * Writes events to the outbox in `tx`, the transaction of the changes they describe (they commit, or roll
 * back, with it): one, or the events of several changes written together (one statement).
 */
export type OutboxWrite = (tx: Queryable, ...events: WebhookEvent[]) => Promise<void>;

// The types and statuses live in @attest/common (the developer portal offers the same list).
export {
  PAYMENT_REQUEST_EVENT_TYPES,
  PAYMENT_REQUEST_STATUSES,
  TRANSACTION_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES,
  type PaymentRequestEventType,
  type PaymentRequestStatus,
  type TransactionEventType,
  type WebhookEventType,
} from '@attest/common';
