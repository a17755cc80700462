import { Gauge, type Registry } from 'prom-client';
import type { PriceService } from '../prices';
import type { FeedRunner } from './feed-runner';

/**
 * Feed health per source on the admin port's /metrics, read from the snapshot in memory at scrape time
 * (no store round trip): quotes held, stale ones, quotes left out for deviating, the newest observation's
 * age, and whether the last run on this replica succeeded.
 */
export class PriceSourceMetrics {
  constructor(
    private readonly prices: Pick<PriceService, 'sourceHealth'>,
    private readonly runner: FeedRunner,
  ) {}

  register(registry: Registry): void {
    const prices = this.prices;
    const runner = this.runner;
    const gauge = (
      name: string,
      help: string,
      value: (h: ReturnType<PriceService['sourceHealth']>) => [string, number][],
    ) =>
      registry.registerMetric(
        new Gauge({
          name,
          help,
          labelNames: ['source'],
          registers: [],
          collect() {
            this.reset();
            for (const [source, v] of value(prices.sourceHealth())) this.set({ source }, v);
          },
        }),
      );
    gauge('price_source_quotes', 'Pairs whose latest quote comes from this source.', (h) =>
      [...h].map(([s, v]) => [s, v.values]),
    );
    gauge('price_source_stale_quotes', 'Of those, older than PRICE_MAX_AGE_SECONDS by the source’s own time.', (h) =>
      [...h].map(([s, v]) => [s, v.stale]),
    );
    gauge('price_source_deviating_quotes', 'Fresh quotes left out for deviating from the median of the sources.', (h) =>
      [...h].map(([s, v]) => [s, v.deviating.length]),
    );
    gauge('price_source_newest_age_seconds', 'Age of the source’s newest observation, by its own time.', (h) =>
      [...h].map(([s, v]) => [s, Math.max(0, (Date.now() - v.newestMs) / 1000)]),
    );
    gauge(
      'price_source_last_run_ok',
      'Whether the last run of the feed on this replica succeeded (1) or failed (0).',
      () =>
        runner
          .runs()
          .filter((r) => r.lastRun)
          .map((r) => [r.name, r.lastRun!.outcome === 'ok' ? 1 : 0]),
    );
  }
}
