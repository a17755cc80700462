import type { Feed } from './feed';
import type { HttpOptions } from './http-json';
import { mappedFeed } from './mapped-feed';

export interface HttpFeedOptions extends HttpOptions {
  /** Base URL of an API in the widely used `/simple/price?ids=…&vs_currencies=…` shape. */
  url: string;
  /** Token code → the API's asset id, e.g. { WLD: 'worldcoin-wld' }. */
  ids: Record<string, string>;
  fiats: string[];
}

/**
 * Token prices from an HTTP price API: `{ "<id>": { "<fiat lowercase>": <number>, "last_updated_at": <unix s> } }`.
 * Each quote keeps the API's `last_updated_at` (asked for with include_last_updated_at=true).
 */
export function httpFeed(options: HttpFeedOptions): Feed {
  return mappedFeed({
    ...options,
    name: 'http',
    url: `${options.url.replace(/\/+$/, '')}/simple/price?ids={ids}&vs_currencies={fiats}&include_last_updated_at=true`,
    price: '{id}.{fiat}',
    time: '{id}.last_updated_at',
  });
}
