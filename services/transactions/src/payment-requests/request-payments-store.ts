import { preparedStatement, type Queryable } from '@attest/common';
import type { TransactionStatus } from '../kernel/transaction';
import { transactionStore } from '../transactions';
import type { RequestPayment } from './payment-request-types';

/** The payments recorded for payment requests (rows of transactions that name one). */
export function requestPaymentsStore(db: Queryable) {
  return {
    /** The payments recorded for a request, oldest first. */
    async payments(id: string): Promise<RequestPayment[]> {
      const rows = await db.query<{
        id: string;
        reference: string;
        transaction_hash: string | null;
        from_address: string;
        status: TransactionStatus;
        status_reason: string | null;
        token_amount: string;
        amount_received: string | null;
        chain_block_number: string | null;
        block_time: Date | null;
        created_at: Date;
      }>(
        preparedStatement(`SELECT id, reference, transaction_hash, from_address, status, status_reason, token_amount, amount_received,
           chain_block_number, block_time, created_at
         FROM transactions WHERE payment_request_id = $1 ORDER BY created_at, id`),
        [id],
      );
      return rows.map((r) => ({
        transactionId: r.id,
        reference: r.reference,
        transactionHash: r.transaction_hash,
        from: r.from_address,
        status: r.status,
        statusReason: r.status_reason,
        tokenAmount: String(r.token_amount),
        amountReceived: r.amount_received === null ? null : String(r.amount_received),
        blockNumber: r.chain_block_number === null ? null : String(r.chain_block_number),
        blockTime: r.block_time,
        createdAt: r.created_at,
      }));
    },
    /** The request a recorded payment names, or null. */
    requestOfTransaction: (transactionId: string): Promise<string | null> =>
      transactionStore(db).paymentRequestOf(transactionId),
    /** What the chain moved for a mined payment of a request (6 decimals), and its block's time. */
    async notePaymentReceived(transactionId: string, amount: string | null, blockTime: Date | null): Promise<void> {
      await db.query(
        'UPDATE transactions SET amount_received = COALESCE($2, token_amount), block_time = COALESCE($3, block_time, now()) WHERE id = $1',
        [transactionId, amount, blockTime],
      );
    },
  };
}
