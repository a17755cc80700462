import type { Router } from 'express';
import {
  adminRoute,
  auditOperatorAction,
  DATE_TIME,
  jsonResponse,
  NULLABLE_DATE_TIME,
  type AuditLog,
  type JsonSchema,
} from '@attest/common';
import type { FeedRunner } from '../feeds';
import type { Observation } from '../kernel/observation';
import type { PriceService, PriceStore } from '../prices';

const FRESHNESS: JsonSchema = {
  type: 'object',
  required: ['values', 'stale', 'newest_observed_at', 'oldest_observed_at'],
  additionalProperties: false,
  properties: {
    values: { type: 'integer', minimum: 0, description: 'Pairs whose latest value this source set' },
    stale: { type: 'integer', minimum: 0, description: 'Of those, older than PRICE_MAX_AGE_SECONDS (not served)' },
    newest_observed_at: NULLABLE_DATE_TIME,
    oldest_observed_at: NULLABLE_DATE_TIME,
  },
};

const FEED_OUTCOMES: JsonSchema = {
  type: 'object',
  description: 'Per feed: ok, failed, or skipped (another replica is running it)',
  additionalProperties: { enum: ['ok', 'skipped', 'failed'] },
};

export interface FeedsAdminDeps {
  prices: Pick<PriceService, 'currentSourceHealth' | 'rule'>;
  store: Pick<PriceStore, 'latestQuotes' | 'latestFxRates'>;
  runner: Pick<FeedRunner, 'runs' | 'runOnce'>;
  audit: Pick<AuditLog, 'record'>;
  /** PRICE_MAX_AGE_SECONDS: older values are not served. */
  maxAgeMs: number;
}

/** Per source (feed, or `manual`): how many pairs it last set, and how fresh they are. */
function freshness(latest: Observation[], maxAgeMs: number, now: number) {
  const bySource = new Map<string, Observation[]>();
  for (const o of latest) bySource.set(o.source, [...(bySource.get(o.source) ?? []), o]);
  return (source: string) => {
    const values = bySource.get(source) ?? [];
    const times = values.map((o) => o.observedAt.getTime());
    return {
      values: values.length,
      stale: times.filter((t) => now - t > maxAgeMs).length,
      newest_observed_at: times.length ? new Date(Math.max(...times)).toISOString() : null,
      oldest_observed_at: times.length ? new Date(Math.min(...times)).toISOString() : null,
    };
  };
}

/** GET /admin/feeds (the feeds and how fresh their values are) and POST /admin/feeds/run (run them now). */
export function feedsAdminRoutes(router: Router, deps: FeedsAdminDeps): void {
  adminRoute(
    router,
    'GET',
    '/feeds',
    {
      summary: 'The feeds and how fresh the values they set are',
      description:
        'Each configured feed and manual: its last run on this replica, and for the latest values it set ' +
        '(prices, fx_rates) how many there are, how many are too old to serve (by the source’s own time), ' +
        'the newest and oldest, and the pairs where it is left out for deviating from the median of the sources.',
      tags: ['feeds'],
      responses: {
        200: jsonResponse('The feeds', {
          type: 'object',
          required: ['max_age_seconds', 'quorum', 'max_deviation_percent', 'feeds'],
          additionalProperties: false,
          properties: {
            max_age_seconds: { type: 'number', description: 'PRICE_MAX_AGE_SECONDS' },
            quorum: { type: 'integer', minimum: 1, description: 'PRICE_SOURCE_QUORUM' },
            max_deviation_percent: { type: 'number', description: 'PRICE_MAX_DEVIATION_PERCENT' },
            feeds: {
              type: 'array',
              items: {
                type: 'object',
                required: ['name', 'last_run', 'prices', 'fx_rates', 'deviating'],
                additionalProperties: false,
                properties: {
                  name: { type: 'string' },
                  last_run: {
                    oneOf: [
                      { type: 'null' },
                      {
                        type: 'object',
                        required: ['at', 'outcome', 'error'],
                        additionalProperties: false,
                        properties: {
                          at: DATE_TIME,
                          outcome: { enum: ['ok', 'failed'] },
                          error: { type: ['string', 'null'] },
                        },
                      },
                    ],
                    description: 'On this replica; null before its first run (and for manual)',
                  },
                  prices: FRESHNESS,
                  fx_rates: FRESHNESS,
                  deviating: {
                    type: 'array',
                    items: { type: 'string' },
                    description:
                      'TOKEN/FIAT pairs where this source’s fresh price is left out: further than ' +
                      'PRICE_MAX_DEVIATION_PERCENT from the median of the sources',
                  },
                },
              },
            },
          },
        }),
      },
    },
    async (_req, res) => {
      const [quotes, fx, health] = await Promise.all([
        deps.store.latestQuotes(),
        deps.store.latestFxRates(),
        deps.prices.currentSourceHealth(),
      ]);
      const now = Date.now();
      const prices = freshness(quotes, deps.maxAgeMs, now);
      const rates = freshness(fx, deps.maxAgeMs, now);
      const feeds = [...deps.runner.runs(), { name: 'manual', lastRun: null }].map((f) => ({
        name: f.name,
        last_run: f.lastRun && { at: f.lastRun.at.toISOString(), outcome: f.lastRun.outcome, error: f.lastRun.error },
        prices: prices(f.name),
        fx_rates: rates(f.name),
        deviating: health.get(f.name)?.deviating ?? [],
      }));
      res.json({
        max_age_seconds: deps.maxAgeMs / 1000,
        quorum: deps.prices.rule.quorum,
        max_deviation_percent: deps.prices.rule.maxDeviationBps / 100,
        feeds,
      });
    },
  );

  adminRoute(
    router,
    'POST',
    '/feeds/run',
    {
      summary: 'Run every feed now',
      tags: ['feeds'],
      responses: { 200: jsonResponse('Each feed’s outcome', FEED_OUTCOMES) },
    },
    async (req, res) => {
      const outcome = await deps.runner.runOnce(true);
      await auditOperatorAction(deps.audit, req, res, { type: 'feeds.run', subject: null, detail: { outcome } });
      res.json(outcome);
    },
  );
}
