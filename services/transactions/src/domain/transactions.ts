import { randomBytes } from 'node:crypto';
import {
  AppError,
  errors,
  KeyBatcher,
  LocalCache,
  type AuditActor,
  type AuditLog,
  type Db,
  type InvalidationBus,
} from '@attest/common';
import {
  transactionStore,
  type NewTransaction,
  type Reason,
  type Transaction,
  type TransactionStatus,
  type TransactionType,
} from '../store/transaction-store';
import { compactTransaction, expandTransaction, StringPool, type CachedTransaction } from './cached-transaction';

export const TRANSACTION_ID = /^0x[0-9a-f]{64}$/;
export const newTransactionId = () => `0x${randomBytes(32).toString('hex')}`;

/** The `type` query values: SPEC's, and the two the original server also accepted. */
export const TYPE_ALIASES: Record<string, TransactionType> = {
  pay: 'pay',
  payment: 'pay',
  sendTransaction: 'sendTransaction',
  transaction: 'sendTransaction',
};

export { toSpec } from './transaction-spec';

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
];

/** The first field in which a repeated record differs from the stored one (addresses compared case-insensitively), or null. */
export function differingField(
  stored: Omit<NewTransaction, 'id'>,
  repeated: Omit<NewTransaction, 'id'>,
): string | null {
  return SAME_RECORD.find(([, value]) => value(stored) !== value(repeated))?.[0] ?? null;
}

/** A change made by a worker (the chain watcher): its source names it. */
const systemActor = (source: string): AuditActor => ({ type: 'system', id: source.split(':')[0] });

const ALLOWED: Record<TransactionStatus, TransactionStatus[]> = { pending: ['mined', 'failed'], mined: [], failed: [] };

export interface TransitionResult {
  transaction: Transaction;
  changed: boolean;
}

/** How a transition to mined claims the on-chain transfer (see TransactionService.transition). */
export interface TransferClaim {
  /** The Transfer log that paid; null for a native transfer or when unknown. */
  logIndex: number | null;
  /** Fail the transaction (already_claimed) rather than refuse the change when the transfer is claimed. */
  failWhenClaimed: boolean;
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
  /** At most `cache.max` (20,000 by default) transactions, in their compact form (about 200 bytes each). */
  private readonly rows: LocalCache<CachedTransaction>;
  private readonly strings = new StringPool();

  private readonly audit?: Pick<AuditLog, 'record'>;

  constructor(
    private readonly db: Db,
    bus: InvalidationBus,
    options: { cache?: TransactionCacheOptions; audit?: Pick<AuditLog, 'record'> } = {},
  ) {
    this.rows = new LocalCache<CachedTransaction>(bus, {
      name: 'transactions',
      ...(options.cache ?? { ttlMs: 60000, max: 20000 }),
    });
    this.audit = options.audit;
  }

  private store = () => transactionStore(this.db);

  /** Cache misses that arrive together are read in one query (a lookup cycle over many ids misses on each). */
  private readonly lookups = new KeyBatcher<Transaction>((ids) => this.store().findMany(ids));

  /**
   * Inserts the transaction with its audit event (and, recorded already mined, its transfer claim) in one
   * database transaction; null when the app used the reference or the transfer is claimed.
   */
  private async insert(input: Omit<NewTransaction, 'id'>, source: string, actor?: AuditActor) {
    const created = await this.db.transaction(async (tx) => {
      const store = transactionStore(tx);
      const t = await store.insert({ ...input, id: newTransactionId() }, source);
      if (!t) return null;
      if (t.status === 'mined' && t.transactionHash && !(await store.claimTransfer(t, null)))
        throw transactionAlreadyClaimed();
      await this.audit?.record(
        {
          type: 'transaction.recorded',
          actor: actor ?? systemActor(source),
          subject: t.id,
          detail: { app_id: t.appId, reference: t.reference, status: t.status, source },
        },
        tx,
      );
      return t;
    });
    if (created) await this.rows.invalidate(created.id);
    return created;
  }

  /** `actor` defaults to the system worker named by `source`; the audit event commits with the change. */
  async record(input: Omit<NewTransaction, 'id'>, source: string, actor?: AuditActor): Promise<Transaction> {
    const created = await this.insert(input, source, actor);
    if (created) return created;
    if (await this.store().findByReference(input.appId, input.reference))
      throw referenceTaken('This app already recorded a transaction with this reference.');
    throw transactionAlreadyClaimed();
  }

  /**
   * Records once per (app_id, reference): repeating the same record answers the stored transaction
   * (`created` false); a record that differs is refused with 409 naming the first field that differs.
   * A transaction_hash that another recorded payment (of any app) holds is refused with 409
   * transaction_already_claimed.
   */
  async recordOnce(
    input: Omit<NewTransaction, 'id'>,
    source: string,
    actor?: AuditActor,
  ): Promise<{ transaction: Transaction; created: boolean }> {
    const created = await this.insert(input, source, actor);
    if (created) return { transaction: created, created: true };
    const stored = await this.store().findByReference(input.appId, input.reference);
    if (!stored) throw transactionAlreadyClaimed();
    const field = differingField(stored, input);
    if (field)
      throw referenceTaken(
        `This app already recorded reference ${JSON.stringify(input.reference)} with a different ${field}; use a new reference for a new payment.`,
        field,
      );
    return { transaction: stored, created: false };
  }

  /** The transaction as last committed, from memory once warm. */
  async get(id: string): Promise<Transaction | null> {
    const cached = await this.rows.get(id, async () => {
      const row = await this.lookups.load(id);
      return row && compactTransaction(id, row, this.strings);
    });
    return cached && expandTransaction(cached);
  }

  async history(id: string) {
    return this.store().history(id);
  }

  async list(q: Parameters<ReturnType<typeof transactionStore>['listForApp']>[0]): Promise<Transaction[]> {
    return this.store().listForApp(q);
  }

  /**
   * `reason` says why (the chain watcher's failure reasons); it is kept with the status and in the
   * history. `actor` defaults to the system worker named by `source`; the audit event commits with the change.
   * Becoming mined claims the transaction's (chain, transaction_hash) in the same database transaction; when
   * another payment claimed it first, the change is refused (409 transaction_already_claimed), or with
   * `claim.failWhenClaimed` (the chain watcher) the transaction becomes failed with the reason already_claimed.
   */
  async transition(
    id: string,
    to: TransactionStatus,
    source: string,
    reason: Reason | null = null,
    actor?: AuditActor,
    claim: TransferClaim = { logIndex: null, failWhenClaimed: false },
  ): Promise<TransitionResult> {
    const result = await this.db.transaction(async (tx) => {
      const store = transactionStore(tx);
      const current = await store.findForUpdate(id);
      if (!current) throw errors.notFound('No transaction with this id.', 'transaction_id');
      if (current.status === to) return { transaction: current, changed: false };
      if (!ALLOWED[current.status].includes(to))
        throw new AppError(
          'invalid_transition',
          409,
          `The transaction is already ${current.status}; it cannot become ${to}.`,
          'status',
        );
      const claimed =
        to !== 'mined' || !current.transactionHash || (await store.claimTransfer(current, claim.logIndex));
      if (!claimed && !claim.failWhenClaimed) throw transactionAlreadyClaimed();
      const [status, why] = claimed ? [to, reason] : (['failed', ALREADY_CLAIMED] as const);
      const transaction = await store.setStatus(id, current.status, status, source, why);
      await this.audit?.record(
        {
          type: 'transaction.status_changed',
          actor: actor ?? systemActor(source),
          subject: id,
          detail: {
            app_id: transaction.appId,
            from: current.status,
            to: status,
            source,
            ...(why ? { reason: why.code } : {}),
          },
        },
        tx,
      );
      return { transaction, changed: true };
    });
    if (result.changed) await this.rows.invalidate(id);
    return result;
  }
}
