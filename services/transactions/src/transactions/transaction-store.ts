import type { Queryable } from '@attest/common';
import { listParams, listSql, type ListQuery } from '../kernel/list-query';
import type { Reason, Transaction, TransactionStatus, TransactionType } from '../kernel/transaction';

export interface StatusChange {
  fromStatus: TransactionStatus | null;
  toStatus: TransactionStatus;
  source: string;
  reason: Reason | null;
  changedAt: Date;
}

interface Row {
  id: string;
  app_id: string;
  type: TransactionType;
  reference: string;
  transaction_hash: string | null;
  status: TransactionStatus;
  from_address: string;
  to_address: string;
  chain: string;
  token: string;
  token_amount: string;
  status_reason: string | null;
  chain_block_hash: string | null;
  payment_request_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const toTransaction = (r: Row): Transaction => ({
  id: r.id,
  appId: r.app_id,
  type: r.type,
  reference: r.reference,
  transactionHash: r.transaction_hash,
  status: r.status,
  from: r.from_address,
  to: r.to_address,
  chain: r.chain,
  token: r.token,
  tokenAmount: String(r.token_amount),
  statusReason: r.status_reason,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export type NewTransaction = Omit<Transaction, 'createdAt' | 'updatedAt' | 'statusReason'> & {
  /** The payment request this payment pays (POST /api/v2/client/transaction's payment_request_id). */
  paymentRequestId?: string | null;
  /**
   * The person behind the agent that paid, as an x402 payment's attest-human proof named them (migration 023):
   * their pairwise subject for the agent app, and the agent's client id.
   */
  human?: { sub: string; agent: string } | null;
};

export interface LeasedTransaction {
  transaction: Transaction;
  ageMs: number;
  /** The block the watcher last saw it in, before it was final. */
  seenBlockHash: string | null;
  /** The payment request it pays: the chain's amount counts toward it, whatever token_amount says. */
  paymentRequestId: string | null;
}

export function transactionStore(db: Queryable) {
  return {
    /**
     * Null when the app already used this reference, or when another recorded payment that has not failed
     * holds this (chain, transaction_hash) (the unique index transactions_transfer_claim_idx decides, so
     * concurrent records of one transaction store one row), or a mined one claimed it (transfer_claims: a
     * row recorded before migration 006 may be mined without holding the index). Call inside a
     * transaction: TransactionService writes its webhook outbox rows in the same one.
     */
    async insert(t: NewTransaction, source: string): Promise<Transaction | null> {
      const [row] = await db.query<Row>(
        `INSERT INTO transactions (id, app_id, type, reference, transaction_hash, status, from_address, to_address, chain, token, token_amount, payment_request_id, human_sub, human_agent)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14
         WHERE NOT EXISTS (SELECT 1 FROM transfer_claims WHERE chain = $9 AND transaction_hash = $5)
         ON CONFLICT DO NOTHING RETURNING *`,
        [
          t.id,
          t.appId,
          t.type,
          t.reference,
          t.transactionHash,
          t.status,
          t.from,
          t.to,
          t.chain,
          t.token,
          t.tokenAmount,
          t.paymentRequestId ?? null,
          t.human?.sub ?? null,
          t.human?.agent ?? null,
        ],
      );
      if (!row) return null;
      await db.query(
        'INSERT INTO transaction_status_history (transaction_id, from_status, to_status, source) VALUES ($1, NULL, $2, $3)',
        [t.id, t.status, source],
      );
      return toTransaction(row);
    },
    /** The transaction an app recorded under a reference (its idempotency key). */
    async findByReference(appId: string, reference: string): Promise<Transaction | null> {
      const [row] = await db.query<Row>('SELECT * FROM transactions WHERE app_id = $1 AND reference = $2', [
        appId,
        reference,
      ]);
      return row ? toTransaction(row) : null;
    },
    /**
     * Claims the on-chain transaction that paid `t` (its chain and hash; `logIndex` the Transfer log, null for
     * a native transfer) as it becomes mined. False when another payment claimed it first: the primary key
     * of transfer_claims decides, across replicas. Call inside the transaction that marks it mined.
     */
    async claimTransfer(t: Transaction, logIndex: number | null): Promise<boolean> {
      const rows = await db.query(
        `INSERT INTO transfer_claims (chain, transaction_hash, transaction_id, log_index) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING RETURNING transaction_id`,
        [t.chain, t.transactionHash, t.id, logIndex],
      );
      return rows.length === 1;
    },
    async find(id: string): Promise<Transaction | null> {
      const [row] = await db.query<Row>('SELECT * FROM transactions WHERE id = $1', [id]);
      return row ? toTransaction(row) : null;
    },
    /** The transactions of these ids that exist, by id: one query for a batch of lookups. */
    async findMany(ids: string[]): Promise<Map<string, Transaction>> {
      const rows = await db.query<Row>('SELECT * FROM transactions WHERE id = ANY($1::text[])', [ids]);
      return new Map(rows.map((row) => [row.id, toTransaction(row)]));
    },
    async findForUpdate(id: string): Promise<Transaction | null> {
      const [row] = await db.query<Row>('SELECT * FROM transactions WHERE id = $1 FOR UPDATE', [id]);
      return row ? toTransaction(row) : null;
    },
    /** The status change and its history entry; run it inside `db.transaction` (TransactionService.transition does, writing its outbox rows). */
    async setStatus(
      id: string,
      from: TransactionStatus,
      to: TransactionStatus,
      source: string,
      reason: Reason | null = null,
    ): Promise<Transaction> {
      const [row] = await db.query<Row>(
        'UPDATE transactions SET status = $2, status_reason = $3, updated_at = now(), watch_lease_until = NULL WHERE id = $1 RETURNING *',
        [id, to, reason?.code ?? null],
      );
      await db.query(
        'INSERT INTO transaction_status_history (transaction_id, from_status, to_status, source, reason, reason_detail) VALUES ($1, $2, $3, $4, $5, $6)',
        [id, from, to, source, reason?.code ?? null, reason?.detail ?? null],
      );
      return toTransaction(row);
    },
    /** An app's transactions, newest first, after the transaction `after`; optionally of one status or reference. */
    async listForApp(q: {
      appId: string;
      status?: TransactionStatus;
      reference?: string;
      after?: string;
      limit: number;
    }): Promise<Transaction[]> {
      const rows = await db.query<Row>(
        `SELECT * FROM transactions
         WHERE app_id = $1 AND ($2::text IS NULL OR status = $2) AND ($5::text IS NULL OR reference = $5)
           AND ($3::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM transactions WHERE id = $3))
         ORDER BY created_at DESC, id DESC LIMIT $4`,
        [q.appId, q.status ?? null, q.after ?? null, q.limit, q.reference ?? null],
      );
      return rows.map(toTransaction);
    },
    /** An app's transactions oldest first from `since`, after the cursor (GET /api/v2/client/transactions). */
    async listPage(q: ListQuery): Promise<(Transaction & { paymentRequestId: string | null })[]> {
      const rows = await db.query<Row>(listSql('transactions'), listParams(q));
      return rows.map((r) => ({ ...toTransaction(r), paymentRequestId: r.payment_request_id }));
    },
    async history(id: string): Promise<StatusChange[]> {
      const rows = await db.query<{
        from_status: TransactionStatus | null;
        to_status: TransactionStatus;
        source: string;
        reason: string | null;
        reason_detail: string | null;
        changed_at: Date;
      }>(
        'SELECT from_status, to_status, source, reason, reason_detail, changed_at FROM transaction_status_history WHERE transaction_id = $1 ORDER BY changed_at, id',
        [id],
      );
      return rows.map((r) => ({
        fromStatus: r.from_status,
        toStatus: r.to_status,
        source: r.source,
        reason: r.reason ? { code: r.reason, detail: r.reason_detail ?? '' } : null,
        changedAt: r.changed_at,
      }));
    },
    /**
     * Leases up to `limit` pending transactions with a hash on one chain for the watcher; SKIP LOCKED
     * and the lease keep replicas from checking the same ones.
     */
    async leasePending(chain: string, limit: number, leaseMs: number): Promise<LeasedTransaction[]> {
      const rows = await db.query<Row & { age_ms: number }>(
        `UPDATE transactions SET watch_lease_until = now() + $3 * interval '1 millisecond', last_checked_at = now()
         WHERE id IN (
           SELECT id FROM transactions
           WHERE status = 'pending' AND transaction_hash IS NOT NULL AND chain = $1
             AND (watch_lease_until IS NULL OR watch_lease_until < now())
           ORDER BY last_checked_at NULLS FIRST, created_at
           LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING *, (extract(epoch FROM now() - created_at) * 1000)::float8 AS age_ms`,
        [chain, limit, leaseMs],
      );
      return rows.map((r) => ({
        transaction: toTransaction(r),
        ageMs: Number(r.age_ms),
        seenBlockHash: r.chain_block_hash,
        paymentRequestId: r.payment_request_id,
      }));
    },
    /** Where the watcher saw a pending transaction (null: nowhere); not a status change. */
    async noteBlock(id: string, blockNumber: bigint | null, blockHash: string | null): Promise<void> {
      await db.query('UPDATE transactions SET chain_block_number = $2, chain_block_hash = $3 WHERE id = $1', [
        id,
        blockNumber?.toString() ?? null,
        blockHash,
      ]);
    },
    /** The payment request a recorded payment names, or null. */
    async paymentRequestOf(id: string): Promise<string | null> {
      const [row] = await db.query<{ payment_request_id: string | null }>(
        'SELECT payment_request_id FROM transactions WHERE id = $1',
        [id],
      );
      return row?.payment_request_id ?? null;
    },
    /** The chain's head as the watcher saw it (the confirmations of payments). */
    async noteHead(chain: string, blockNumber: bigint): Promise<void> {
      await db.query(
        `INSERT INTO chain_heads (chain, block_number) VALUES ($1, $2)
         ON CONFLICT (chain) DO UPDATE SET block_number = $2, seen_at = now()`,
        [chain, blockNumber.toString()],
      );
    },
    /** A pending payment of `chain` in a block, or a detected payment request: something not final shows confirmations. */
    async awaitingFinality(chain: string): Promise<boolean> {
      const [row] = await db.query<{ awaiting: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM transactions WHERE chain = $1 AND status = 'pending' AND chain_block_number IS NOT NULL)
             OR EXISTS (SELECT 1 FROM payment_requests WHERE chain = $1 AND status = 'detected') AS awaiting`,
        [chain],
      );
      return row.awaiting;
    },
    /**
     * Whether a recorded payment holds this transaction (one that has not failed, under the claim index) or
     * a payment claimed it (transfer_claims). Hashes are kept lower case (the API lowers them).
     */
    async transactionHeld(chain: string, hash: string): Promise<boolean> {
      const [row] = await db.query<{ held: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM transfer_claims WHERE chain = $1 AND transaction_hash = $2)
             OR EXISTS (SELECT 1 FROM transactions WHERE chain = $1 AND transaction_hash = $2 AND status <> 'failed') AS held`,
        [chain, hash.toLowerCase()],
      );
      return row.held;
    },
    /** The payment that claimed this transaction (transfer_claims), or null. */
    async claimHolder(chain: string, hash: string): Promise<Transaction | null> {
      const [row] = await db.query<Row>(
        `SELECT t.* FROM transfer_claims c JOIN transactions t ON t.id = c.transaction_id
         WHERE c.chain = $1 AND c.transaction_hash = $2`,
        [chain, hash],
      );
      return row ? toTransaction(row) : null;
    },
    async releaseLease(id: string): Promise<void> {
      await db.query('UPDATE transactions SET watch_lease_until = NULL WHERE id = $1', [id]);
    },
  };
}
export type TransactionStore = ReturnType<typeof transactionStore>;
