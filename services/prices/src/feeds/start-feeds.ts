import type { Cache, Logger } from '@attest/common';
import type { PricesConfig } from '../config';
import type { PriceService } from '../prices';
import { configuredFeeds } from './configured-feeds';
import { FeedRunner } from './feed-runner';

/**
 * The feeds of PRICE_FEEDS on their schedule: the seed runs before the service is ready (awaited), the
 * others' first run starts at once in the background.
 */
export async function startFeeds(
  config: PricesConfig,
  prices: Pick<PriceService, 'codes' | 'record'>,
  cache: Cache,
  logger: Logger,
): Promise<FeedRunner> {
  const runner = new FeedRunner(
    configuredFeeds(config),
    prices,
    cache,
    config.PRICE_FEED_INTERVAL_SECONDS * 1000,
    logger,
  );
  if (config.PRICE_FEEDS.split(',').includes('seed')) await runner.runOnce(true, ['seed']);
  const others = config.PRICE_FEEDS.split(',').filter((f) => f !== 'seed');
  if (others.length) void runner.runOnce(true, others);
  runner.start();
  return runner;
}
