import type { Db, Queryable } from '../db';
import type { Logger } from '../logger';
import { WriteBatcher } from '../write-batcher';
import { AuditJournal } from './audit-journal';
import { auditStore, type AuditEvent, type AuditQuery, type StoredAuditEvent } from './audit-store';

export interface AuditLogOptions {
  /** Events older than this many days are purged. */
  retentionDays: number;
  purgeEveryMs?: number;
  /** Pause between retries of events the database did not take. */
  retryMs?: number;
  /** Events kept in memory for a retry at most; beyond, each is written to the log in full. */
  maxPending?: number;
  /**
   * The embedded database's write-ahead journal of events (see AuditJournal): `record(event)` returns once
   * the event is journaled, and it is stored after. Unset (DATABASE_URL): `record` returns once it is stored.
   */
  journalDir?: string;
  /** With a journal: how many inserts may be under way before `record` waits for its own again (default 1000). */
  maxAhead?: number;
}

/** An event on its way to the table, and its place in the journal (when there is one). */
type Entry = { event: AuditEvent; seq?: number };

const HOUR = 3600000;

/**
 * The audit trail of one service. `record(event, tx)` inside a transaction commits with the change
 * it describes. `record(event)` alone awaits the insert but never fails the caller: an event the
 * database refuses is kept and retried every `retryMs`, and one that cannot be kept (queue full, or
 * still pending at shutdown) is written to the log in full, so no event is lost silently.
 *
 * Single events recorded alone at the same time are inserted together (WriteBatcher: one statement and one
 * commit for all of them), and each caller's `record` still returns only once its event is stored (or kept
 * for the retry): on the embedded database an awaited INSERT per token exchange (issue 42) was a fifth of its
 * CPU, and its answers left one by one (bench/README.md, "Token exchange and the CIBA poll").
 *
 * With a journal (`journalDir`: the embedded database of `pnpm start`), `record(event)` returns once the
 * event is in the journal, one write to a file, and the insert follows; an event the journal has and the
 * table has not is stored at the next start (AuditJournal).
 */
export class AuditLog {
  private readonly store;
  private readonly batcher: WriteBatcher<Entry, void>;
  private readonly journal?: AuditJournal;
  /** What an earlier process journaled and did not store: stored from start(). */
  private leftovers: Entry[] = [];
  /** Records under way through the batcher: stop() and list() wait for them. */
  private readonly underWay = new Set<Promise<void>>();
  private readonly pending: Entry[] = [];
  private retryTimer?: NodeJS.Timeout;
  private purgeTimer?: NodeJS.Timeout;

  constructor(
    db: Db,
    private readonly logger: Logger,
    private readonly options: AuditLogOptions,
  ) {
    this.store = auditStore(db);
    // a batch the database refuses is written again one by one (the batcher's default), so an event it
    // refuses fails alone; record keeps it for the retry
    this.batcher = new WriteBatcher(async (entries: Entry[]) => {
      await this.store.insert(entries.map((e) => e.event));
      this.markStored(entries);
      return entries.map(() => undefined);
    });
    if (options.journalDir) {
      const { journal, leftovers } = AuditJournal.open(options.journalDir);
      this.journal = journal;
      this.leftovers = leftovers;
    }
  }

  /** Records one event, or several in one statement (changes written together, as payment requests' creations). */
  async record(event: AuditEvent | readonly AuditEvent[], tx?: Queryable): Promise<void> {
    const events = Array.isArray(event) ? (event as readonly AuditEvent[]) : [event as AuditEvent];
    if (tx) return auditStore(tx).insert(events);
    if (events.length === 1) return this.recordAlone(events[0]);
    try {
      await this.store.insert(events);
    } catch (err) {
      for (const e of events) this.keep({ event: e }, err as Error);
    }
  }

  /**
   * One event, inserted with the others recorded at the same time. With a journal, it is journaled and the
   * caller goes on: the insert follows (bench/README.md, "The token exchange's audit event, written ahead").
   */
  private recordAlone(event: AuditEvent): Promise<void> {
    const seq = this.journaled(event);
    // past maxAhead inserts under way, the caller waits for its own: the journal never runs ahead of the
    // database by more than that, whatever the load
    const ahead = seq !== undefined && this.underWay.size < (this.options.maxAhead ?? 1000);
    const recorded = this.throughBatcher({ event, seq });
    return ahead ? Promise.resolve() : recorded;
  }

  private throughBatcher(entry: Entry): Promise<void> {
    const recorded = this.batcher.write(entry).catch((err: Error) => this.keep(entry, err));
    this.underWay.add(recorded);
    return recorded.finally(() => this.underWay.delete(recorded));
  }

  /** The event's place in the journal; undefined without one, or when the file could not be written (it is then awaited). */
  private journaled(event: AuditEvent): number | undefined {
    if (!this.journal) return undefined;
    try {
      return this.journal.append(event);
    } catch (err) {
      this.logger.warn('audit event not journaled; storing it before answering', {
        type: event.type,
        error: (err as Error).message,
      });
      return undefined;
    }
  }

  /** The events, newest first; those recorded before the call are in it (their inserts are waited for). */
  async list(query: AuditQuery): Promise<StoredAuditEvent[]> {
    await Promise.all([...this.underWay]);
    return this.store.list(query);
  }

  async purge(): Promise<number> {
    const removed = await this.store.purge(this.options.retentionDays);
    if (removed) this.logger.info('audit events purged', { rows: removed, retention_days: this.options.retentionDays });
    return removed;
  }

  /**
   * Stores what an earlier process journaled and did not store, and purges now and then every
   * `purgeEveryMs` (hourly); many replicas purging at once is harmless.
   */
  start(): void {
    const leftovers = this.leftovers.splice(0);
    if (leftovers.length) {
      this.logger.info('storing audit events journaled before a stop', { events: leftovers.length });
      for (const entry of leftovers) void this.throughBatcher(entry);
    }
    const purge = () =>
      void this.purge().catch((err: Error) => this.logger.warn('audit events not purged', { error: err.message }));
    purge();
    this.purgeTimer = setInterval(purge, this.options.purgeEveryMs ?? HOUR);
    this.purgeTimer.unref();
  }

  /** Stops the purge and makes a last attempt at the pending events. */
  async stop(): Promise<void> {
    clearInterval(this.purgeTimer);
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    // the inserts under way end first: an event they could not store is then in `pending`
    await Promise.all([...this.underWay]);
    await this.flush();
    // still in the journal, if there is one: the next start stores them
    for (const { event } of this.pending.splice(0))
      this.logger.error('audit event not stored', { audit_event: event, journaled: this.journal !== undefined });
    this.journal?.close();
  }

  /** How many events wait for a retry. */
  get backlog(): number {
    return this.pending.length;
  }

  /** Tries the pending events once; true when none is left. */
  async flush(): Promise<boolean> {
    if (this.pending.length === 0) return true;
    const batch = this.pending.splice(0);
    try {
      await this.store.insert(batch.map((e) => e.event));
      this.markStored(batch);
      this.logger.info('pending audit events stored', { events: batch.length });
      return true;
    } catch {
      this.pending.unshift(...batch);
      return false;
    }
  }

  /** Marks journaled events stored; a failure to write the mark only means they would be stored again after a crash. */
  private markStored(entries: readonly Entry[]): void {
    if (!this.journal) return;
    const seqs = entries.flatMap((e) => (e.seq === undefined ? [] : [e.seq]));
    try {
      this.journal.stored(seqs);
    } catch (err) {
      this.logger.warn('audit journal not updated', { error: (err as Error).message });
    }
  }

  private keep(entry: Entry, err: Error): void {
    const { event } = entry;
    if (this.pending.length >= (this.options.maxPending ?? 10000)) {
      this.logger.error('audit event not stored', {
        audit_event: event,
        error: err.message,
        journaled: entry.seq !== undefined,
      });
      return;
    }
    this.pending.push(entry);
    this.logger.warn('audit event not stored yet; retrying', {
      type: event.type,
      error: err.message,
      pending: this.pending.length,
    });
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      // flush never rejects: it reports whether the events were stored
      void this.flush().then((done) => {
        this.retryTimer = undefined;
        if (!done) this.scheduleRetry();
      });
    }, this.options.retryMs ?? 1000);
    this.retryTimer.unref();
  }
}
