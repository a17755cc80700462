import { randomBytes } from 'node:crypto';
import { AppError, errors, invalidateAfterCommit, type Cache, type Db, type Logger } from '@attest/common';
import { transactionStore, type NewTransaction, type Transaction, type TransactionStatus, type TransactionType } from '../store/transaction-store';

export const TRANSACTION_ID = /^0x[0-9a-f]{64}$/;
export const newTransactionId = () => `0x${randomBytes(32).toString('hex')}`;

/** The `type` query values: SPEC's, and the two the original server also accepted. */
export const TYPE_ALIASES: Record<string, TransactionType> = { pay: 'pay', payment: 'pay', sendTransaction: 'sendTransaction', transaction: 'sendTransaction' };

/** SPEC 2.5, snake_case; token_amount an integer string, timestamp ISO 8601. */
export function toSpec(t: Transaction) {
  return {
    reference: t.reference,
    transaction_hash: t.transactionHash,
    transaction_status: t.status,
    from: t.from,
    chain: t.chain,
    timestamp: t.createdAt.toISOString(),
    token_amount: t.tokenAmount,
    token: t.token,
    to: t.to,
    app_id: t.appId,
  };
}

const ALLOWED: Record<TransactionStatus, TransactionStatus[]> = { pending: ['mined', 'failed'], mined: [], failed: [] };

export interface TransitionResult {
  transaction: Transaction;
  changed: boolean;
}

interface CachedTransaction extends Omit<Transaction, 'createdAt' | 'updatedAt'> {
  createdAt: string;
  updatedAt: string;
}

/**
 * Transactions and their one-way state machine: pending → mined | failed; final states stay final;
 * repeating a transition is a no-op; every change goes to the history with its source.
 * Lookups are cached (final states long, pending briefly) and a transition invalidates at once; a committed
 * transition is a success even when the cache cannot be reached (the invalidation is retried).
 */
export class TransactionService {
  constructor(
    private readonly db: Db,
    private readonly cache: Cache,
    private readonly logger: Logger,
    private readonly ttl: { pendingMs: number; finalMs: number } = { pendingMs: 2000, finalMs: 3600000 },
  ) {}

  private store = () => transactionStore(this.db);

  async record(input: Omit<NewTransaction, 'id'>, source: string): Promise<Transaction> {
    const created = await this.db.transaction((tx) => transactionStore(tx).insert({ ...input, id: newTransactionId() }, source));
    if (!created) throw errors.conflict('reference_taken', 'This app already recorded a transaction with this reference.', 'reference');
    return created;
  }

  async get(id: string): Promise<Transaction | null> {
    const key = `tx:${id}`;
    const cached = await this.cache.get(key);
    if (cached) {
      const c = JSON.parse(cached) as CachedTransaction;
      return { ...c, createdAt: new Date(c.createdAt), updatedAt: new Date(c.updatedAt) };
    }
    const found = await this.store().find(id);
    if (found) await this.cache.set(key, JSON.stringify(found), found.status === 'pending' ? this.ttl.pendingMs : this.ttl.finalMs);
    return found;
  }

  async history(id: string) {
    return this.store().history(id);
  }

  async transition(id: string, to: TransactionStatus, source: string): Promise<TransitionResult> {
    const result = await this.db.transaction(async (tx) => {
      const store = transactionStore(tx);
      const current = await store.findForUpdate(id);
      if (!current) throw errors.notFound('No transaction with this id.', 'transaction_id');
      if (current.status === to) return { transaction: current, changed: false };
      if (!ALLOWED[current.status].includes(to))
        throw new AppError('invalid_transition', 409, `The transaction is already ${current.status}; it cannot become ${to}.`, 'status');
      return { transaction: await store.setStatus(id, current.status, to, source), changed: true };
    });
    // only a pending transaction changes, and a pending one is cached for ttl.pendingMs at most
    if (!result.changed) return result;
    await invalidateAfterCommit(this.cache, [`tx:${id}`], this.logger, { entryTtlMs: this.ttl.pendingMs });
    return result;
  }
}
