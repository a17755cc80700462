// Admin: the prices admin API (prices and FX rates set by hand, a pair's history, the feeds).
export { pricesAdminRoutes, type PricesAdminDeps } from './admin-routes';
export { feedsAdminRoutes, type FeedsAdminDeps } from './feeds-admin-route';
export { manualPriceRoutes, type ManualPriceDeps } from './manual-price-routes';
export { fxSchema, priceSchema } from './manual-values';
export { priceHistoryAdminRoute, type PriceHistoryAdminDeps } from './price-history-admin-route';
