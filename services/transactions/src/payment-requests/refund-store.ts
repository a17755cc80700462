import type { Queryable } from '@attest/common';
import type { Refund } from './payment-request-types';

interface RefundRow {
  id: string;
  payment_request_id: string;
  app_id: string;
  chain: string;
  transaction_hash: string;
  log_index: number | null;
  token: string;
  from_address: string;
  to_address: string;
  amount: string;
  block_number: string;
  block_time: Date;
  created_at: Date;
}

const toRefund = (r: RefundRow): Refund => ({
  id: r.id,
  paymentRequestId: r.payment_request_id,
  appId: r.app_id,
  chain: r.chain,
  transactionHash: r.transaction_hash,
  logIndex: r.log_index,
  token: r.token,
  from: r.from_address,
  to: r.to_address,
  amount: String(r.amount),
  blockNumber: String(r.block_number),
  blockTime: r.block_time,
  createdAt: r.created_at,
});

/** The refunds table (migration 020) and the transfer claim each refund holds. */
export function refundStore(db: Queryable) {
  return {
    /**
     * Inserts the refund and claims its transfer in transfer_claims (the claim payments hold once mined), in the
     * caller's transaction; null when a payment or another refund holds the transaction (a recorded payment
     * that has not failed, a claim, or a refund: the unique indexes decide across replicas).
     */
    async insert(f: Omit<Refund, 'createdAt'>): Promise<Refund | null> {
      const [held] = await db.query<{ held: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM transactions WHERE chain = $1 AND transaction_hash = $2 AND status <> 'failed') AS held`,
        [f.chain, f.transactionHash],
      );
      if (held.held) return null;
      const [row] = await db.query<RefundRow>(
        `INSERT INTO refunds (id, payment_request_id, app_id, chain, transaction_hash, log_index, token, from_address,
           to_address, amount, block_number, block_time)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12
         WHERE NOT EXISTS (SELECT 1 FROM transfer_claims WHERE chain = $4 AND transaction_hash = $5)
         ON CONFLICT DO NOTHING RETURNING *`,
        [
          f.id,
          f.paymentRequestId,
          f.appId,
          f.chain,
          f.transactionHash,
          f.logIndex,
          f.token,
          f.from,
          f.to,
          f.amount,
          f.blockNumber,
          f.blockTime,
        ],
      );
      if (!row) return null;
      const claimed = await db.query(
        `INSERT INTO transfer_claims (chain, transaction_hash, refund_id, log_index) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING RETURNING refund_id`,
        [f.chain, f.transactionHash, f.id, f.logIndex],
      );
      // a payment claimed it since the check above: the caller rolls the refund back
      return claimed.length === 1 ? toRefund(row) : null;
    },
    async findByTransaction(chain: string, transactionHash: string): Promise<Refund | null> {
      const [row] = await db.query<RefundRow>('SELECT * FROM refunds WHERE chain = $1 AND transaction_hash = $2', [
        chain,
        transactionHash,
      ]);
      return row ? toRefund(row) : null;
    },
    /** A request's refunds, oldest first, after the refund `after` (a cursor), at most `limit`. */
    async forRequest(requestId: string, page: { after?: string; limit?: number } = {}): Promise<Refund[]> {
      const rows = await db.query<RefundRow>(
        `SELECT * FROM refunds WHERE payment_request_id = $1
           AND ($2::text IS NULL OR (created_at, id) > (SELECT created_at, id FROM refunds WHERE id = $2 AND payment_request_id = $1))
         ORDER BY created_at, id LIMIT $3`,
        [requestId, page.after ?? null, page.limit ?? 1000],
      );
      return rows.map(toRefund);
    },
    /** Adds a refund's amount to its request's amount_refunded. */
    async addRefunded(requestId: string, amount: string): Promise<void> {
      await db.query('UPDATE payment_requests SET amount_refunded = amount_refunded + $2 WHERE id = $1', [
        requestId,
        amount,
      ]);
    },
  };
}

/** A request's refunds for its JSON: none read when it has none (amount_refunded 0, the usual case). */
export const refundsOf = (db: Queryable, r: { id: string; amountRefunded: string }): Promise<Refund[]> =>
  r.amountRefunded === '0' ? Promise.resolve([]) : refundStore(db).forRequest(r.id);
