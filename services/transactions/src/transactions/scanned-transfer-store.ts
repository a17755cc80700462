import type { Queryable } from '@attest/common';
import { toTransfer, type StoredTransfer, type TransferOutcome, type TransferRow } from '../kernel/chain-transfer';

/** The kept transfers as the watcher attaches them to payment requests; `db` may be a transaction. */
export function scannedTransferStore(db: Queryable) {
  return {
    /**
     * The next transfer not considered yet that has its block's time, locked for this transaction (SKIP
     * LOCKED: replicas take different ones); call inside a transaction.
     */
    async nextUnconsidered(chain: string): Promise<StoredTransfer | null> {
      const [row] = await db.query<TransferRow>(
        `SELECT * FROM chain_transfers WHERE chain = $1 AND outcome IS NULL AND block_time IS NOT NULL
         ORDER BY block_number, log_index LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [chain],
      );
      return row ? toTransfer(row) : null;
    },
    /** What the watcher made of a transfer; it is not considered again. */
    async setOutcome(
      t: StoredTransfer,
      outcome: TransferOutcome,
      attached: { paymentRequestId: string; transactionId: string } | null = null,
    ): Promise<void> {
      await db.query(
        `UPDATE chain_transfers SET outcome = $4, payment_request_id = $5, transaction_id = $6, considered_at = now()
         WHERE chain = $1 AND transaction_hash = $2 AND log_index = $3`,
        [
          t.chain,
          t.transactionHash,
          t.logIndex,
          outcome,
          attached?.paymentRequestId ?? null,
          attached?.transactionId ?? null,
        ],
      );
    },
  };
}
export type ScannedTransferStore = ReturnType<typeof scannedTransferStore>;
