import { AuditLog, createServiceApps, type BuiltService, type ServiceDeps } from '@attest/common';
import { pricesAdminRoutes } from './admin/admin-routes';
import { assetIds, type PricesConfig } from './config';
import { PriceHistory } from './domain/history';
import { PriceService } from './domain/prices';
import { QuotePurge } from './domain/quote-purge';
import type { Feed } from './feeds/feed';
import { FeedRunner } from './feeds/feed-runner';
import { fxFeed } from './feeds/fx-feed';
import { httpFeed } from './feeds/http-feed';
import { mappedFeed } from './feeds/mapped-feed';
import { PriceSourceMetrics } from './feeds/source-metrics';
import { seedFeed } from './feeds/seed-feed';
import { pricesAdminApi, pricesApi } from './routes/openapi-document';
import { AddressLimit } from './routes/address-limit';
import { pricesRoute } from './routes/prices-route';
import { PriceStream, streamRoute } from './routes/stream-route';
import { widgetRoute } from './routes/widget-route';
import { priceStore } from './store/price-store';

export function configuredFeeds(config: PricesConfig): Feed[] {
  const http = {
    timeoutMs: config.PRICE_HTTP_TIMEOUT_MS,
    retries: config.PRICE_HTTP_RETRIES,
    backoffMs: config.PRICE_HTTP_BACKOFF_MS,
  };
  const { PRICE_HTTP_HEADER_NAME: headerName, PRICE_HTTP_HEADER_VALUE: headerValue } = config;
  return config.PRICE_FEEDS.split(',').map((name) => {
    if (name === 'seed') return seedFeed(config.PRICE_SEED_FILE);
    if (name === 'http')
      return httpFeed({
        ...http,
        headers: headerName && headerValue ? { [headerName]: headerValue } : undefined,
        url: config.PRICE_HTTP_URL!,
        ids: Object.fromEntries(
          config.PRICE_HTTP_IDS.split(',').map((pair) => [pair.split('=')[0].toUpperCase(), pair.split('=')[1]]),
        ),
        fiats: config.PRICE_HTTP_FIATS.split(',').map((f) => f.toUpperCase()),
      });
    if (name === 'fx') return fxFeed({ ...http, url: config.FX_HTTP_URL! });
    const source = config.PRICE_SOURCES.find((s) => s.name === name)!;
    return mappedFeed({
      ...http,
      ...source,
      ids: Object.fromEntries(Object.entries(source.ids).map(([token, id]) => [token.toUpperCase(), id])),
      fiats: source.fiats ?? config.PRICE_HTTP_FIATS.split(',').map((f) => f.toUpperCase()),
    });
  });
}

/**
 * Prices answers from a snapshot in memory (latest values, reloaded after each write): it can serve while
 * Postgres answers, or while the snapshot still holds a fresh native-token price. Redis only carries
 * feed locks and reload messages, so its loss alone does not stop the public API.
 */
export const pricesReady = (ok: Record<string, boolean>) => ok.database || ok.price_snapshot;

/** Composition root: store → price service → routes; feeds on a schedule (the seed runs before the service is ready). */
export async function buildApp(deps: ServiceDeps<PricesConfig>): Promise<BuiltService> {
  const { config, storage, logger } = deps;
  const store = priceStore(storage.db);
  const prices = new PriceService(store, storage.bus, config.PRICE_MAX_AGE_SECONDS * 1000, {
    assetIds: assetIds(config),
    rule: { quorum: config.PRICE_SOURCE_QUORUM, maxDeviationBps: Math.round(config.PRICE_MAX_DEVIATION_PERCENT * 100) },
  });
  deps.readiness.checks.push({
    name: 'price_snapshot',
    check: () => prices.assertFreshInSnapshot(config.NATIVE_TOKEN),
  });
  deps.readiness.rule = pricesReady;
  const runner = new FeedRunner(
    configuredFeeds(config),
    prices,
    storage.cache,
    config.PRICE_FEED_INTERVAL_SECONDS * 1000,
    logger,
  );
  if (config.PRICE_FEEDS.split(',').includes('seed')) await runner.runOnce(true, ['seed']);
  const others = config.PRICE_FEEDS.split(',').filter((f) => f !== 'seed');
  if (others.length) void runner.runOnce(true, others);
  runner.start();
  const history = new PriceHistory(store);
  const purge = new QuotePurge(store, storage.cache, config.PRICE_QUOTE_RETENTION_DAYS, logger);
  purge.start();
  const limit = new AddressLimit({ limit: config.PRICE_RATE_LIMIT_PER_MINUTE, windowSeconds: 60 });
  const streamOptions = {
    nativeToken: config.NATIVE_TOKEN,
    maxConnections: config.PRICE_STREAM_MAX_CONNECTIONS,
    maxPerAddress: config.PRICE_STREAM_MAX_PER_ADDRESS,
    heartbeatMs: config.PRICE_STREAM_HEARTBEAT_SECONDS * 1000,
    limit,
    history,
    bus: storage.bus,
    logger,
  };
  const stream = new PriceStream(prices, streamOptions);
  const audit = new AuditLog(storage.db, logger, { retentionDays: config.AUDIT_RETENTION_DAYS });
  audit.start();
  const apps = createServiceApps({
    service: 'prices',
    logger,
    readiness: deps.readiness,
    adminToken: deps.adminToken,
    adminTokens: config.ADMIN_TOKENS,
    audit: { log: audit, db: storage.db },
    trustProxy: config.TRUST_PROXY,
    publicUrl: config.PRICES_URL,
    bodyLimit: config.BODY_LIMIT,
    publicApi: pricesApi(config.PRICES_URL),
    metrics: (registry) => new PriceSourceMetrics(prices, runner).register(registry),
    adminApi: pricesAdminApi(),
    publicRoutes: (router) => {
      pricesRoute(router, prices, {
        nativeToken: config.NATIVE_TOKEN,
        cacheMaxAgeSeconds: config.PRICE_CACHE_MAX_AGE_SECONDS,
        limit,
        history,
      });
      streamRoute(router, prices, stream, streamOptions);
      widgetRoute(router);
    },
    adminRoutes: (router) =>
      pricesAdminRoutes(router, { prices, store, runner, audit, maxAgeMs: config.PRICE_MAX_AGE_SECONDS * 1000 }),
  });
  return {
    ...apps,
    stop: async () => {
      stream.close();
      await runner.stop();
      purge.stop();
      await audit.stop();
    },
  };
}
