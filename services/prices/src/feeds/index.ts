// Feeds: the price sources (seed, http, fx, mapped HTTP sources), run on a schedule into the prices, and
// their health on /metrics.
export { configuredFeeds } from './configured-feeds';
export type { Feed, FeedResult } from './feed';
export { FeedRunner, type FeedRun } from './feed-runner';
export { fxFeed, type FxFeedOptions } from './fx-feed';
export { httpFeed, type HttpFeedOptions } from './http-feed';
export { decimalText, fetchJson, FeedError, plainDecimal, type HttpOptions } from './http-json';
export { mappedFeed, observedAt, sourceTime, valueAt, type MappedFeedOptions, type SourceMapping } from './mapped-feed';
export { DEFAULT_SEED_FILE, seedFeed } from './seed-feed';
export { PriceSourceMetrics } from './source-metrics';
export { startFeeds } from './start-feeds';
