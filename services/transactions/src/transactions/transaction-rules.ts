import { randomBytes } from 'node:crypto';
import { errors, type AuditActor } from '@attest/common';
import type { Reason, TransactionStatus, TransactionType } from '../kernel/transaction';
import type { NewTransaction } from './transaction-store';

/** The rules of recorded transactions: their ids, types, the conflicts of a record, and who changed them. */

export const TRANSACTION_ID = /^0x[0-9a-f]{64}$/;
export const newTransactionId = () => `0x${randomBytes(32).toString('hex')}`;

/** The `type` query values: SPEC's, and the two the original server also accepted. */
export const TYPE_ALIASES: Record<string, TransactionType> = {
  pay: 'pay',
  payment: 'pay',
  sendTransaction: 'sendTransaction',
  transaction: 'sendTransaction',
};

/** 409 reference_taken: the app used this reference for another transaction. */
export const referenceTaken = (detail: string, attribute = 'reference') =>
  errors.conflict('reference_taken', detail, attribute);

/**
 * 409 transaction_already_claimed: another recorded payment (of this app or another) holds this on-chain
 * transaction; one transaction pays at most one recorded payment.
 */
export const transactionAlreadyClaimed = () =>
  errors.conflict(
    'transaction_already_claimed',
    'Another recorded payment already claims this transaction_hash on this chain; one on-chain transaction pays at most one payment.',
    'transaction_hash',
  );

/** The reason a payment the chain paid is failed when another payment claimed the same transaction first. */
export const ALREADY_CLAIMED: Reason = {
  code: 'already_claimed',
  detail: 'The chain holds this payment, but another recorded payment claimed the same transaction first.',
};

/** The fields that make two records of one reference the same transaction, in the SPEC 2.5 names. */
const SAME_RECORD: [string, (t: Omit<NewTransaction, 'id'>) => string | null][] = [
  ['type', (t) => t.type],
  ['transaction_hash', (t) => t.transactionHash?.toLowerCase() ?? null],
  ['chain', (t) => t.chain],
  ['token', (t) => t.token.toUpperCase()],
  ['token_amount', (t) => BigInt(t.tokenAmount).toString()],
  ['from', (t) => t.from.toLowerCase()],
  ['to', (t) => t.to.toLowerCase()],
  ['payment_request_id', (t) => t.paymentRequestId ?? null],
];

/** The first field in which a repeated record differs from the stored one (addresses compared case-insensitively), or null. */
export function differingField(
  stored: Omit<NewTransaction, 'id'>,
  repeated: Omit<NewTransaction, 'id'>,
): string | null {
  return SAME_RECORD.find(([, value]) => value(stored) !== value(repeated))?.[0] ?? null;
}

/** A change made by a worker (the chain watcher): its source names it. */
export const systemActor = (source: string): AuditActor => ({ type: 'system', id: source.split(':')[0] });

/** The one-way state machine: pending → mined | failed; final states stay final. */
export const ALLOWED: Record<TransactionStatus, TransactionStatus[]> = {
  pending: ['mined', 'failed'],
  mined: [],
  failed: [],
};
