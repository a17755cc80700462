import { randomUUID } from 'node:crypto';
import type { Cache, Logger } from '@attest/common';
import type { PriceStore } from './price-store';

const HOUR = 3600_000;

/**
 * Retention of quotes and FX rates: hourly, one replica (the one that takes the lock) deletes what was
 * observed more than PRICE_QUOTE_RETENTION_DAYS ago, always keeping the latest of each source.
 */
export class QuotePurge {
  private timer?: NodeJS.Timeout;
  private readonly instance = randomUUID();

  constructor(
    private readonly store: PriceStore,
    private readonly cache: Cache,
    private readonly retentionDays: number,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Purges now (when this replica takes the hour's lock, unless forced); the rows deleted. */
  async purge(force = false): Promise<number> {
    if (!force && !(await this.cache.setIfAbsent('quote-purge-lock', this.instance, HOUR - 60_000))) return 0;
    const removed = await this.store.purgeBefore(new Date(this.now() - this.retentionDays * 24 * HOUR));
    if (removed) this.logger.info('quotes purged', { rows: removed, retention_days: this.retentionDays });
    return removed;
  }

  start(): void {
    const run = () =>
      void this.purge().catch((err: Error) => this.logger.warn('quotes not purged', { error: err.message }));
    this.first = setTimeout(run, 10_000).unref();
    this.timer = setInterval(run, HOUR).unref();
  }

  private first?: NodeJS.Timeout;

  stop(): void {
    clearTimeout(this.first);
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
