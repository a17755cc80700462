// Prices: the latest prices (snapshot, aggregation of sources, cross rates), their history and change,
// the store of quotes and FX rates and its retention, and the public price endpoints.
export { aggregate, median, MANUAL, SEED, type Aggregate, type AggregationRule } from './aggregate';
export { CHANGE_WINDOWS, HISTORY_RANGES, percentChange, PriceHistory, type HistoryRange } from './history';
export { priceHistoryRoute, type PriceHistoryDeps } from './history-route';
export { latestPricesRoute, type LatestPricesDeps } from './latest-route';
export { buildAnswer, type Price, type PriceAnswer } from './price-answer';
export { EXPOSED } from './price-http';
export {
  DEFAULT_RULE,
  PRICE_SNAPSHOT_CACHE,
  priceUnavailable,
  type LatestValues,
  PriceService,
  type PriceServiceOptions,
  type SourceHealth,
} from './price-service';
export { priceStore, type PairObservation, type PriceStore, type StoredWrite } from './price-store';
export { parsePricesQuery, pricesQuerySchema, type PricesQuery } from './prices-query';
export { QuotePurge } from './quote-purge';
