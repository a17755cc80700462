import type { PricesConfig } from '../config';
import type { Feed } from './feed';
import { fxFeed } from './fx-feed';
import { httpFeed } from './http-feed';
import { mappedFeed } from './mapped-feed';
import { seedFeed } from './seed-feed';

/** The feeds PRICE_FEEDS names, in its order: the built-in seed, http and fx, and each of PRICE_SOURCES. */
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
