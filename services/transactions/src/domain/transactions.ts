import { randomBytes } from 'node:crypto';
import { AppError, errors, LocalCache, type Db, type InvalidationBus } from '@attest/common';
import { transactionStore, type NewTransaction, type Transaction, type TransactionStatus, type TransactionType } from '../store/transaction-store';

export const TRANSACTION_ID = /^0x[0-9a-f]{64}$/;
export const newTransactionId = () => `0x${randomBytes(32).toString('hex')}`;

/** The `type` query values: SPEC's, and the two the original server also accepted. */
export const TYPE_ALIASES: Record<string, TransactionType> = { pay: 'pay', payment: 'pay', sendTransaction: 'sendTransaction', transaction: 'sendTransaction' };

export { toSpec } from './transaction-spec';

const ALLOWED: Record<TransactionStatus, TransactionStatus[]> = { pending: ['mined', 'failed'], mined: [], failed: [] };

export interface TransitionResult {
  transaction: Transaction;
  changed: boolean;
}

export interface TransactionCacheOptions {
  /** Backstop for a missed invalidation. */
  ttlMs: number;
  max: number;
}

/**
 * Transactions and their one-way state machine: pending → mined | failed; final states stay final;
 * repeating a transition is a no-op; every change goes to the history with its source.
 * Lookups are served from process memory (unknown ids too); every committed change (record,
 * transition) drops the row here at once and on every replica through the bus.
 */
export class TransactionService {
  private readonly rows: LocalCache<Transaction>;

  constructor(
    private readonly db: Db,
    bus: InvalidationBus,
    cache: TransactionCacheOptions = { ttlMs: 60000, max: 20000 },
  ) {
    this.rows = new LocalCache<Transaction>(bus, { name: 'transactions', ...cache });
  }

  private store = () => transactionStore(this.db);

  async record(input: Omit<NewTransaction, 'id'>, source: string): Promise<Transaction> {
    const created = await this.db.transaction((tx) => transactionStore(tx).insert({ ...input, id: newTransactionId() }, source));
    if (!created) throw errors.conflict('reference_taken', 'This app already recorded a transaction with this reference.', 'reference');
    await this.rows.invalidate(created.id);
    return created;
  }

  /** The transaction as last committed, from memory once warm. */
  get(id: string): Promise<Transaction | null> {
    return this.rows.get(id, () => this.store().find(id));
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
    if (result.changed) await this.rows.invalidate(id);
    return result;
  }
}
