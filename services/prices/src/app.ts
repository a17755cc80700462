import { createServiceAppsFrom, serviceAuditLog, type BuiltService, type ServiceDeps } from '@attest/common';
import { pricesAdminRoutes } from './admin';
import { pricesAdminApi, pricesApi } from './api-documents';
import { assetIds, type PricesConfig } from './config';
import { PriceSourceMetrics, startFeeds } from './feeds';
import { AddressLimit } from './kernel/address-limit';
import { latestPricesRoute, PriceHistory, priceHistoryRoute, priceStore, PriceService, QuotePurge } from './prices';
import { PriceStream, streamRoute } from './stream';
import { widgetRoute } from './widget';

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
  const runner = await startFeeds(config, prices, storage.cache, logger);
  const history = new PriceHistory(store);
  const purge = new QuotePurge(store, storage.cache, config.PRICE_QUOTE_RETENTION_DAYS, logger);
  purge.start();
  const limit = new AddressLimit({ limit: config.PRICE_RATE_LIMIT_PER_MINUTE, windowSeconds: 60 });
  const stream = new PriceStream(prices, {
    maxConnections: config.PRICE_STREAM_MAX_CONNECTIONS,
    maxPerAddress: config.PRICE_STREAM_MAX_PER_ADDRESS,
    heartbeatMs: config.PRICE_STREAM_HEARTBEAT_SECONDS * 1000,
    history,
    store,
    bus: storage.bus,
    logger,
  });
  const audit = serviceAuditLog(deps);
  audit.start();
  const nativeToken = config.NATIVE_TOKEN;
  const apps = createServiceAppsFrom(deps, {
    service: 'prices',
    audit,
    publicUrl: config.PRICES_URL,
    publicApi: pricesApi(config.PRICES_URL),
    metrics: (registry) => new PriceSourceMetrics(prices, runner).register(registry),
    adminApi: pricesAdminApi(),
    publicRoutes: (router) => {
      latestPricesRoute(router, {
        nativeToken,
        cacheMaxAgeSeconds: config.PRICE_CACHE_MAX_AGE_SECONDS,
        limit,
        history,
        prices,
      });
      priceHistoryRoute(router, { limit, history, prices });
      streamRoute(router, { nativeToken, limit, prices, stream });
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
