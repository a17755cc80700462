import type { Router } from 'express';
import type { AuditLog } from '@attest/common';
import type { FeedRunner } from '../feeds';
import type { PriceService, PriceStore } from '../prices';
import { feedsAdminRoutes } from './feeds-admin-route';
import { manualPriceRoutes } from './manual-price-routes';
import { priceHistoryAdminRoute } from './price-history-admin-route';

export interface PricesAdminDeps {
  prices: Pick<PriceService, 'codes' | 'recordQuote' | 'recordFx' | 'currentSourceHealth' | 'rule'>;
  store: Pick<PriceStore, 'history' | 'latestQuotes' | 'latestFxRates'>;
  runner: Pick<FeedRunner, 'runs' | 'runOnce'>;
  audit: Pick<AuditLog, 'record'>;
  /** PRICE_MAX_AGE_SECONDS: older values are not served. */
  maxAgeMs: number;
}

/**
 * Admin API: set a price or an FX rate by hand (visible to the next request), history, the feeds and
 * how fresh their values are, run the feeds now. (The order is the admin document's.)
 */
export function pricesAdminRoutes(router: Router, deps: PricesAdminDeps): void {
  manualPriceRoutes(router, deps);
  priceHistoryAdminRoute(router, deps);
  feedsAdminRoutes(router, deps);
}
