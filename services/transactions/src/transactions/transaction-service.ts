import {
  AppError,
  errors,
  KeyBatcher,
  LocalCache,
  type AuditActor,
  type AuditLog,
  type Db,
  type InvalidationBus,
  type Queryable,
} from '@attest/common';
import { SPEC_DECIMALS } from '../kernel/chain-tokens';
import type { OutboxWrite } from '../kernel/events';
import type { ObservedPayment, PaymentSettlement } from '../kernel/settlement';
import type { Reason, Transaction, TransactionStatus } from '../kernel/transaction';
import { compactTransaction, expandTransaction, StringPool, type CachedTransaction } from './cached-transaction';
import type { StoredTransfer, TransferOutcome } from '../kernel/chain-transfer';
import { scannedTransferStore } from './scanned-transfer-store';
import { transactionEvents } from './transaction-events';
import {
  ALREADY_CLAIMED,
  newTransactionId,
  referenceTaken,
  ALLOWED,
  systemActor,
  transactionAlreadyClaimed,
  differingField,
} from './transaction-rules';
import { transactionStore, type NewTransaction } from './transaction-store';
import { writeEvent } from '../webhooks';

/** What attachScanned made of one kept transfer. */
export type ScannedOutcome = { transfer: StoredTransfer } & (
  | { outcome: 'attached'; paymentRequestId: string; transactionId: string }
  | { outcome: Exclude<TransferOutcome, 'attached'> }
);

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
  /** For a payment of a payment request: what the chain moved (6 decimals) and its block's time. */
  observed?: ObservedPayment;
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
  private readonly settlement?: PaymentSettlement;
  private readonly outbox: OutboxWrite;

  constructor(
    private readonly db: Db,
    bus: InvalidationBus,
    options: {
      cache?: TransactionCacheOptions;
      audit?: Pick<AuditLog, 'record'>;
      /** Payment requests: settled again in the transaction of each change of one of their payments. */
      settlement?: PaymentSettlement;
      /** Where each change's webhook events are written, in the change's own database transaction. */
      outbox?: OutboxWrite;
    } = {},
  ) {
    this.rows = new LocalCache<CachedTransaction>(bus, {
      name: 'transactions',
      ...(options.cache ?? { ttlMs: 60000, max: 20000 }),
    });
    this.audit = options.audit;
    this.settlement = options.settlement;
    this.outbox = options.outbox ?? writeEvent;
  }

  /** The webhook outbox rows of a change, in the change's own transaction `tx`. */
  private async writeEvents(tx: Queryable, t: Transaction, change: 'created' | 'status'): Promise<void> {
    for (const event of transactionEvents(t, change)) await this.outbox(tx, event);
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
      // the request first, then the payment's row (its unique hash): the watcher's order when it attaches a transfer
      if (input.paymentRequestId) await this.settlement?.lock(tx, input.paymentRequestId);
      const t = await store.insert({ ...input, id: newTransactionId() }, source);
      if (!t) return null;
      await this.writeEvents(tx, t, 'created');
      // the request is settled in this payment's token from now on (refused when it is paid in another)
      if (input.paymentRequestId) await this.settlement?.recorded(tx, input.paymentRequestId, t.token);
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
    if (created && input.paymentRequestId) await this.settlement?.changed(input.paymentRequestId);
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
    if (!stored) {
      const attached = await this.attachedPayment(input);
      if (attached) return { transaction: attached, created: false };
      throw transactionAlreadyClaimed();
    }
    const field = differingField(
      { ...stored, paymentRequestId: await this.store().paymentRequestOf(stored.id) },
      input,
    );
    if (field)
      throw referenceTaken(
        `This app already recorded reference ${JSON.stringify(input.reference)} with a different ${field}; use a new reference for a new payment.`,
        field,
      );
    return { transaction: stored, created: false };
  }

  /**
   * The payment the chain watcher made of this transaction from its scan (reference `chain:<hash>:<log>`),
   * when it pays the request this record names, for this app, from the same `from` to the same `to`: the
   * wallet's record of a payment already counted answers it rather than 409.
   */
  private async attachedPayment(input: Omit<NewTransaction, 'id'>): Promise<Transaction | null> {
    if (!input.paymentRequestId || !input.transactionHash) return null;
    const holder = await this.store().claimHolder(input.chain, input.transactionHash.toLowerCase());
    if (!holder || holder.appId !== input.appId || !holder.reference.startsWith('chain:')) return null;
    if (holder.from.toLowerCase() !== input.from.toLowerCase() || holder.to.toLowerCase() !== input.to.toLowerCase())
      return null;
    return (await this.store().paymentRequestOf(holder.id)) === input.paymentRequestId ? holder : null;
  }

  /** The transaction as last committed, from memory once warm. */
  async get(id: string): Promise<Transaction | null> {
    const cached = await this.rows.get(id, async () => {
      const row = await this.lookups.load(id);
      return row && compactTransaction(id, row, this.strings);
    });
    return cached && expandTransaction(cached);
  }

  /** The watcher noted the block that holds a pending transaction (null: it left the block it was seen in). */
  async noteBlock(id: string, blockNumber: bigint | null, blockHash: string | null): Promise<void> {
    await this.store().noteBlock(id, blockNumber, blockHash);
    await this.settlement?.blockNoted(id);
  }

  /** The watcher noted the chain's head (the confirmations payment requests show). */
  async noteHead(chain: string, blockNumber: bigint): Promise<void> {
    await this.store().noteHead(chain, blockNumber);
    await this.settlement?.headNoted(chain);
  }

  /**
   * The watcher saw a payment of a payment request in a block that is not final yet (`movedFrom`: the block
   * it was seen in before a reorganisation moved it).
   */
  async detected(id: string, blockNumber: bigint, movedFrom?: string): Promise<void> {
    await this.settlement?.detected(id, blockNumber, movedFrom);
  }

  /** The block the watcher saw a pending transaction in was reorganised away: it is in no block now. */
  async reorganised(id: string, blockHash: string): Promise<void> {
    await this.noteBlock(id, null, null);
    await this.settlement?.reorganised(id, blockHash);
  }

  /**
   * Whether something on `chain` is not final yet and shows confirmations: a pending payment in a block, or
   * a detected payment request. The watcher notes the head while there is.
   */
  async awaitingFinality(chain: string): Promise<boolean> {
    return this.store().awaitingFinality(chain);
  }

  /**
   * Attaches the transfers the scanner kept and has not considered yet to the payment requests they pay
   * (PaymentRequestService's matchTransfer rule), up to `limit`; each is considered once. An attached
   * transfer becomes a payment of the request, recorded mined (reference `chain:<hash>:<log index>`, with
   * its transaction.created and transaction.mined events) and claiming its transaction in the same database
   * transaction, so it never pays two requests and a transaction already recorded or claimed is left to its
   * recorded payment. `decimals` converts each token's amount to 6 decimals. The transfers attached.
   */
  async attachScanned(
    chain: string,
    decimals: Readonly<Record<string, number>>,
    limit = 100,
  ): Promise<ScannedOutcome[]> {
    const done: ScannedOutcome[] = [];
    for (let i = 0; i < limit; i++) {
      const outcome = await this.db.transaction(async (tx) => {
        const transfers = scannedTransferStore(tx);
        const t = await transfers.nextUnconsidered(chain);
        if (!t) return null;
        const result = await this.attachOne(tx, t, decimals[t.token]);
        await transfers.setOutcome(t, result.outcome, result.outcome === 'attached' ? result : null);
        return { transfer: t, ...result };
      });
      if (!outcome) break;
      done.push(outcome);
      if ('transactionId' in outcome) {
        await this.rows.invalidate(outcome.transactionId);
        await this.settlement?.changed(outcome.paymentRequestId);
      }
    }
    return done;
  }

  private async attachOne(
    tx: Queryable,
    t: StoredTransfer,
    decimals: number | undefined,
  ): Promise<
    | { outcome: 'attached'; paymentRequestId: string; transactionId: string }
    | { outcome: Exclude<TransferOutcome, 'attached'> }
  > {
    const store = transactionStore(tx);
    if (await store.transactionHeld(t.chain, t.transactionHash)) return { outcome: 'recorded' };
    const amount = decimals === undefined ? 0n : (t.value * 10n ** BigInt(SPEC_DECIMALS)) / 10n ** BigInt(decimals);
    if (amount === 0n || !this.settlement || !t.blockTime) return { outcome: 'unmatched' };
    const match = await this.settlement.matchTransfer(tx, { ...t, amount, blockTime: t.blockTime });
    if (!('request' in match)) return { outcome: match.outcome };
    const r = match.request;
    const source = `chain:scan@${t.blockNumber}`;
    const inserted = await store.insert(
      {
        id: newTransactionId(),
        appId: r.appId,
        type: 'pay',
        reference: `chain:${t.transactionHash}:${t.logIndex}`,
        transactionHash: t.transactionHash,
        status: 'mined',
        from: t.from,
        to: t.to,
        chain: t.chain,
        token: t.token,
        tokenAmount: amount.toString(),
        paymentRequestId: r.id,
      },
      source,
    );
    // held by a record made since the check above (the unique index decides): the recorded payment decides
    if (!inserted) return { outcome: 'recorded' };
    await this.writeEvents(tx, inserted, 'created');
    // the request is settled in this transfer's token from now on (it was matched accepting it)
    await this.settlement.recorded(tx, r.id, inserted.token);
    if (!(await store.claimTransfer(inserted, t.logIndex)))
      throw new Error('a transaction checked unclaimed was claimed in the same database transaction');
    await store.noteBlock(inserted.id, t.blockNumber, t.blockHash);
    await this.settlement.settled(tx, inserted, { amountReceived: amount, blockTime: t.blockTime });
    await this.audit?.record(
      {
        type: 'transaction.recorded',
        actor: systemActor(source),
        subject: inserted.id,
        detail: {
          app_id: inserted.appId,
          reference: inserted.reference,
          status: 'mined',
          source,
          payment_request_id: r.id,
          log_index: t.logIndex,
        },
      },
      tx,
    );
    return { outcome: 'attached', paymentRequestId: r.id, transactionId: inserted.id };
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
      if (current.status === to) return { transaction: current, changed: false, requestId: null };
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
      await this.writeEvents(tx, transaction, 'status');
      const requestId = (await this.settlement?.settled(tx, transaction, claim.observed ?? {})) ?? null;
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
      return { transaction, changed: true, requestId };
    });
    if (result.changed) await this.rows.invalidate(id);
    if (result.requestId) await this.settlement?.changed(result.requestId);
    return { transaction: result.transaction, changed: result.changed };
  }
}
