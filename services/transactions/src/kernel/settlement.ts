import type { Queryable } from '@attest/common';
import type { Transaction } from './transaction';

/**
 * What the transactions feature asks of payment requests: the hooks TransactionService calls on a payment's
 * changes, and the request a recorded payment names. The payment requests feature implements them; the
 * composition root hands them over, so neither feature imports the other.
 */

/** What the chain showed about a payment as it became final. */
export interface ObservedPayment {
  /** The amount the chain moved (6 decimals); undefined: the recorded token_amount (an operator's change). */
  amountReceived?: bigint;
  /** The time of the block that holds it. */
  blockTime?: Date;
}

/** A transfer the watcher scanned in a final block, as matching needs it (addresses lower case, amount in 6 decimals). */
export interface ScannedTransfer {
  chain: string;
  token: string;
  to: string;
  amount: bigint;
  blockTime: Date;
}

/** The request a scanned transfer pays, or why none. */
export type SettlementMatch =
  { request: { id: string; appId: string } } | { outcome: 'unmatched' | 'ambiguous'; candidates: number };

/** The hooks TransactionService calls on a payment's changes. */
export interface PaymentSettlement {
  /**
   * Locks the request for `tx` before its payment is inserted: the chain watcher locks the requests a transfer
   * may pay before it inserts that transfer's payment, so both take their locks in the same order.
   */
  lock(tx: Queryable, requestId: string): Promise<void>;
  /**
   * A payment naming a request was inserted, in `tx`: the request is settled in its token from now on
   * (409 payment_token_mismatch when it is settled in another one; 400 when the request does not accept it).
   */
  recorded(tx: Queryable, requestId: string, token: string): Promise<void>;
  /** A payment became mined or failed: its request is settled again, in `tx`; the request's id, or null. */
  settled(tx: Queryable, t: Transaction, observed: ObservedPayment): Promise<string | null>;
  /**
   * The watcher saw a payment in a block that is not final yet; `movedFrom`: the block hash it was seen in
   * before, when a reorganisation moved it to this block.
   */
  detected(transactionId: string, blockNumber: bigint, movedFrom?: string): Promise<void>;
  /** A payment's block was reorganised away before it was final: its request goes back from detected to pending. */
  reorganised(transactionId: string, blockHash: string): Promise<void>;
  /** The open request a scanned transfer pays (see matchTransfer), read in `tx`. */
  matchTransfer(tx: Queryable, transfer: ScannedTransfer): Promise<SettlementMatch>;
  /** After a commit that changed a request or one of its payments (recorded, settled, its block noted). */
  changed(requestId: string): Promise<void>;
  /** After the watcher noted a payment's block (or its leaving one): the request that payment names, if any. */
  blockNoted(transactionId: string): Promise<void>;
  /** After the watcher noted the chain's head. */
  headNoted(chain: string): Promise<void>;
}

/** The request a payment may be recorded for (POST /api/v2/client/transaction's payment_request_id). */
export interface PaymentRequestLookup {
  /** 404 when it is not this app's. */
  forPayment(
    appId: string,
    id: string,
  ): Promise<{ id: string; chain: string; to: string; accepted: readonly { token: string; amountDue: string }[] }>;
}
