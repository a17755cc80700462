import { randomBytes } from 'node:crypto';
import { AppError, errors, LocalCache, type AuditActor, type AuditLog, type Db, type InvalidationBus } from '@attest/common';
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

/** A change made by a worker (the chain watcher): its source names it. */
const systemActor = (source: string): AuditActor => ({ type: 'system', id: source.split(':')[0] });

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

  private readonly audit?: Pick<AuditLog, 'record'>;

  constructor(
    private readonly db: Db,
    bus: InvalidationBus,
    options: { cache?: TransactionCacheOptions; audit?: Pick<AuditLog, 'record'> } = {},
  ) {
    this.rows = new LocalCache<Transaction>(bus, { name: 'transactions', ...(options.cache ?? { ttlMs: 60000, max: 20000 }) });
    this.audit = options.audit;
  }

  private store = () => transactionStore(this.db);

  /** `actor` defaults to the system worker named by `source`; the audit event commits with the change. */
  async record(input: Omit<NewTransaction, 'id'>, source: string, actor?: AuditActor): Promise<Transaction> {
    const created = await this.db.transaction(async (tx) => {
      const t = await transactionStore(tx).insert({ ...input, id: newTransactionId() }, source);
      if (t) await this.audit?.record({ type: 'transaction.recorded', actor: actor ?? systemActor(source), subject: t.id, detail: { app_id: t.appId, reference: t.reference, status: t.status, source } }, tx);
      return t;
    });
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

  async list(q: Parameters<ReturnType<typeof transactionStore>['listForApp']>[0]): Promise<Transaction[]> {
    return this.store().listForApp(q);
  }

  async transition(id: string, to: TransactionStatus, source: string, actor?: AuditActor): Promise<TransitionResult> {
    const result = await this.db.transaction(async (tx) => {
      const store = transactionStore(tx);
      const current = await store.findForUpdate(id);
      if (!current) throw errors.notFound('No transaction with this id.', 'transaction_id');
      if (current.status === to) return { transaction: current, changed: false };
      if (!ALLOWED[current.status].includes(to))
        throw new AppError('invalid_transition', 409, `The transaction is already ${current.status}; it cannot become ${to}.`, 'status');
      const transaction = await store.setStatus(id, current.status, to, source);
      await this.audit?.record(
        { type: 'transaction.status_changed', actor: actor ?? systemActor(source), subject: id, detail: { app_id: transaction.appId, from: current.status, to, source } },
        tx,
      );
      return { transaction, changed: true };
    });
    if (result.changed) await this.rows.invalidate(id);
    return result;
  }
}
