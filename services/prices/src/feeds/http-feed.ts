import { parseDecimal } from '../domain/decimal';
import type { Feed, FeedResult } from './feed';
import { decimalText, fetchJson, FeedError, plainDecimal, type HttpOptions } from './http-json';

export interface HttpFeedOptions extends HttpOptions {
  /** Base URL of an API in the widely used `/simple/price?ids=…&vs_currencies=…` shape. */
  url: string;
  /** Token code → the API's asset id, e.g. { WLD: 'worldcoin-wld' }. */
  ids: Record<string, string>;
  fiats: string[];
}

/** Token prices from an HTTP price API: `{ "<id>": { "<fiat lowercase>": <number> } }`. */
export function httpFeed(options: HttpFeedOptions): Feed {
  return {
    name: 'http',
    async fetch(): Promise<FeedResult> {
      const url = new URL(`${options.url.replace(/\/+$/, '')}/simple/price`);
      url.searchParams.set('ids', Object.values(options.ids).join(','));
      url.searchParams.set('vs_currencies', options.fiats.map((f) => f.toLowerCase()).join(','));
      const body = await fetchJson(url.toString(), options);
      if (typeof body !== 'object' || body === null) throw new FeedError('Price API answer is not an object');
      const observedAt = new Date();
      const quotes: FeedResult['quotes'] = [];
      for (const [token, id] of Object.entries(options.ids)) {
        const row = (body as Record<string, unknown>)[id];
        if (typeof row !== 'object' || row === null) continue;
        for (const fiat of options.fiats) {
          const text = decimalText((row as Record<string, unknown>)[fiat.toLowerCase()]);
          const fixed = text ? parseDecimal(plainDecimal(text) ?? '') : null;
          if (fixed)
            quotes.push({
              token,
              fiat: fiat.toUpperCase(),
              observation: { amount: fixed.amount.toString(), decimals: fixed.decimals, source: 'http', observedAt },
            });
        }
      }
      if (quotes.length === 0) throw new FeedError('Price API answer held no usable prices');
      return { quotes, fx: [] };
    },
  };
}
