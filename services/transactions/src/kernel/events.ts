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

/** Writes an event to the outbox in `tx`, the transaction of the change it describes (it commits, or rolls back, with it). */
export type OutboxWrite = (tx: Queryable, event: WebhookEvent) => Promise<void>;

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
] as const;
export type PaymentRequestStatus = (typeof PAYMENT_REQUEST_STATUSES)[number];

/** payment_request.pending: a detected payment's block was reorganised away (reason `reorganised`). */
export type PaymentRequestEventType = `payment_request.${PaymentRequestStatus | 'created'}`;
export const PAYMENT_REQUEST_EVENT_TYPES: PaymentRequestEventType[] = [
  'payment_request.created',
  ...PAYMENT_REQUEST_STATUSES.map((s): PaymentRequestEventType => `payment_request.${s}`),
];

export type WebhookEventType = TransactionEventType | PaymentRequestEventType;
export const WEBHOOK_EVENT_TYPES: WebhookEventType[] = [...TRANSACTION_EVENT_TYPES, ...PAYMENT_REQUEST_EVENT_TYPES];
