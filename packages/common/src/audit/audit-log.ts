import type { Db, Queryable } from '../db';
import type { Logger } from '../logger';
import { WriteBatcher } from '../write-batcher';
import { auditStore, type AuditEvent, type AuditQuery, type StoredAuditEvent } from './audit-store';

export interface AuditLogOptions {
  /** Events older than this many days are purged. */
  retentionDays: number;
  purgeEveryMs?: number;
  /** Pause between retries of events the database did not take. */
  retryMs?: number;
  /** Events kept in memory for a retry at most; beyond, each is written to the log in full. */
  maxPending?: number;
}

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
 */
export class AuditLog {
  private readonly store;
  private readonly batcher: WriteBatcher<AuditEvent, void>;
  /** Records under way through the batcher: stop() waits for them before its last attempt. */
  private readonly underWay = new Set<Promise<void>>();
  private readonly pending: AuditEvent[] = [];
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
    this.batcher = new WriteBatcher(async (events: AuditEvent[]) => {
      await this.store.insert(events);
      return events.map(() => undefined);
    });
  }

  /** Records one event, or several in one statement (changes written together, as payment requests' creations). */
  async record(event: AuditEvent | readonly AuditEvent[], tx?: Queryable): Promise<void> {
    const events = Array.isArray(event) ? (event as readonly AuditEvent[]) : [event as AuditEvent];
    if (tx) return auditStore(tx).insert(events);
    if (events.length === 1) return this.recordAlone(events[0]);
    try {
      await this.store.insert(events);
    } catch (err) {
      for (const e of events) this.keep(e, err as Error);
    }
  }

  /** One event, inserted with the others recorded at the same time. */
  private recordAlone(event: AuditEvent): Promise<void> {
    const recorded = this.batcher.write(event).catch((err: Error) => this.keep(event, err));
    this.underWay.add(recorded);
    return recorded.finally(() => this.underWay.delete(recorded));
  }

  list(query: AuditQuery): Promise<StoredAuditEvent[]> {
    return this.store.list(query);
  }

  async purge(): Promise<number> {
    const removed = await this.store.purge(this.options.retentionDays);
    if (removed) this.logger.info('audit events purged', { rows: removed, retention_days: this.options.retentionDays });
    return removed;
  }

  /** Purges now and then every `purgeEveryMs` (hourly); many replicas purging at once is harmless. */
  start(): void {
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
    for (const event of this.pending.splice(0)) this.logger.error('audit event not stored', { audit_event: event });
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
      await this.store.insert(batch);
      this.logger.info('pending audit events stored', { events: batch.length });
      return true;
    } catch {
      this.pending.unshift(...batch);
      return false;
    }
  }

  private keep(event: AuditEvent, err: Error): void {
    if (this.pending.length >= (this.options.maxPending ?? 10000)) {
      this.logger.error('audit event not stored', { audit_event: event, error: err.message });
      return;
    }
    this.pending.push(event);
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
