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
 * The events recorded alone at the same time are inserted together (WriteBatcher: one statement and one
 * commit for all of them), and each caller's `record` still returns only once its event is stored: on
 * the embedded database an INSERT and its commit cost ~1 ms of the one core in PGlite, so a busy path
 * that records an event per request (a token exchange, issue 42) spent a fifth of its time there.
 */
export class AuditLog {
  private readonly store;
  private readonly batcher: WriteBatcher<AuditEvent>;
  private readonly pending: AuditEvent[] = [];
  private retryTimer?: NodeJS.Timeout;
  private purgeTimer?: NodeJS.Timeout;

  constructor(
    db: Db,
    private readonly logger: Logger,
    private readonly options: AuditLogOptions,
  ) {
    this.store = auditStore(db);
    // a batch the database refuses is kept for a retry before its callers' record resolves
    this.batcher = new WriteBatcher((events) =>
      this.store.insert(events).catch((err: Error) => this.keep(events, err)),
    );
  }

  async record(event: AuditEvent, tx?: Queryable): Promise<void> {
    if (tx) return auditStore(tx).insert([event]);
    await this.batcher.write(event);
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

  /** Stops the purge, waits for the inserts under way and makes a last attempt at the pending events. */
  async stop(): Promise<void> {
    clearInterval(this.purgeTimer);
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    // a batch that fails now is in `pending` when this resolves
    await this.batcher.settled();
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

  private keep(events: AuditEvent[], err: Error): void {
    for (const event of events) {
      if (this.pending.length >= (this.options.maxPending ?? 10000)) {
        this.logger.error('audit event not stored', { audit_event: event, error: err.message });
        continue;
      }
      this.pending.push(event);
      this.logger.warn('audit event not stored yet; retrying', {
        type: event.type,
        error: err.message,
        pending: this.pending.length,
      });
    }
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
