import { randomUUID } from 'node:crypto';
import type { Cache, Logger } from '@attest/common';
import type { PriceService } from '../prices';
import type { Feed } from './feed';

/**
 * Runs each feed on a schedule. A lock in the shared cache lets one replica run a feed per interval;
 * a failed run keeps the last prices, which turn stale (503) after PRICE_MAX_AGE_SECONDS rather than lie.
 */
/** What this replica saw of a feed's last run (another replica may have run it since). */
export interface FeedRun {
  at: Date;
  outcome: 'ok' | 'failed';
  error: string | null;
}

export class FeedRunner {
  private timer?: NodeJS.Timeout;
  private readonly lastRuns = new Map<string, FeedRun>();
  private running?: Promise<void>;
  private readonly instance = randomUUID();

  constructor(
    private readonly feeds: Feed[],
    private readonly prices: Pick<PriceService, 'codes' | 'record'>,
    private readonly cache: Cache,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** Runs every feed whose lock this replica wins; returns per-feed outcome. */
  async runOnce(force = false, only?: string[]): Promise<Record<string, 'ok' | 'skipped' | 'failed'>> {
    const outcome: Record<string, 'ok' | 'skipped' | 'failed'> = {};
    const { tokens, fiats } = await this.prices.codes();
    for (const feed of this.feeds.filter((f) => !only || only.includes(f.name))) {
      if (
        !force &&
        !(await this.cache.setIfAbsent(`feed-lock:${feed.name}`, this.instance, Math.max(1000, this.intervalMs - 500)))
      ) {
        outcome[feed.name] = 'skipped';
        continue;
      }
      try {
        const result = await feed.fetch();
        const quotes = result.quotes.filter((q) => tokens.has(q.token) && fiats.has(q.fiat));
        const fx = result.fx.filter((r) => fiats.has(r.fiat));
        await this.prices.record({ quotes, fx });
        this.logger.info('price feed ran', { feed: feed.name, quotes: quotes.length, fx: fx.length });
        outcome[feed.name] = 'ok';
        this.lastRuns.set(feed.name, { at: new Date(), outcome: 'ok', error: null });
      } catch (err) {
        this.logger.warn('price feed failed', { feed: feed.name, error: (err as Error).message });
        outcome[feed.name] = 'failed';
        this.lastRuns.set(feed.name, { at: new Date(), outcome: 'failed', error: (err as Error).message });
      }
    }
    return outcome;
  }

  /** The configured feeds and the last run this replica made of each. */
  runs(): { name: string; lastRun: FeedRun | null }[] {
    return this.feeds.map((f) => ({ name: f.name, lastRun: this.lastRuns.get(f.name) ?? null }));
  }

  start(): void {
    const loop = () => {
      this.running = this.runOnce().then(
        () => undefined,
        (err: Error) => void this.logger.warn('price feeds failed', { error: err.message }),
      );
      // running never rejects (failures are logged above); the next run is scheduled once it settles
      void this.running.then(() => {
        if (this.timer) this.timer = setTimeout(loop, this.intervalMs);
      });
    };
    this.timer = setTimeout(loop, this.intervalMs);
  }

  async stop(): Promise<void> {
    const timer = this.timer;
    this.timer = undefined;
    if (timer) clearTimeout(timer);
    await this.running;
  }
}
