import { isLosslessNumber } from 'lossless-json';
import { parseDecimal } from '../kernel/decimal';
import type { Feed, FeedResult } from './feed';
import { decimalText, fetchJson, FeedError, plainDecimal, type HttpOptions } from './http-json';

/**
 * Where a source's answer holds each price and the time its source observed it. Paths are dot-separated
 * keys into the JSON answer; each key may hold `{id}` (the source's id of the token), `{fiat}` (lower case)
 * or `{FIAT}` (upper case); a key of digits indexes an array. Example (the `/simple/price` shape):
 * `{ price: '{id}.{fiat}', time: '{id}.last_updated_at' }`.
 */
export interface SourceMapping {
  price: string;
  /** Unix seconds, Unix milliseconds or an ISO 8601 date-time; without it the fetch time is used. */
  time?: string;
}

export interface MappedFeedOptions extends HttpOptions, SourceMapping {
  /** The feed's name: the `source` of its quotes. */
  name: string;
  /** The request URL; `{ids}` and `{fiats}` / `{FIATS}` are replaced by comma-separated lists. */
  url: string;
  /** Token code → the source's id, e.g. { WLD: 'worldcoin-wld' }. */
  ids: Record<string, string>;
  fiats: string[];
}

const substitute = (text: string, vars: Record<string, string>) =>
  text.replace(/\{(id|fiat|FIAT|ids|fiats|FIATS)\}/g, (_, key: string) => vars[key] ?? '');

/**
 * The value at a dot-separated path (each key substituted first), or undefined. In an array a key of
 * digits is an index (`data.WLD.0.quote.USD.price`: CoinMarketCap answers an array per symbol); no other
 * key reads an array (not `length`).
 */
export function valueAt(body: unknown, path: string, vars: Record<string, string>): unknown {
  let node = body;
  for (const raw of path.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    const key = substitute(raw, vars);
    if (Array.isArray(node)) {
      if (!/^\d{1,6}$/.test(key)) return undefined;
      node = node[Number(key)];
    } else node = Object.hasOwn(node, key) ? (node as Record<string, unknown>)[key] : undefined;
  }
  return node;
}

/**
 * A source's observation time: a number is Unix seconds (milliseconds when it is past year 5138), a string
 * an ISO 8601 date-time. undefined when the source gives none, null when it gives one that is not a time.
 */
export function sourceTime(value: unknown): Date | null | undefined {
  if (value === undefined || value === null) return undefined;
  // numbers arrive as their decimal text (fetchJson keeps them exact)
  const text = isLosslessNumber(value)
    ? value.value
    : typeof value === 'number' || (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value))
      ? String(value)
      : null;
  if (text !== null) {
    const n = Number(text);
    if (!Number.isFinite(n) || n <= 0) return null;
    return new Date(n > 1e11 ? n : n * 1000);
  }
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)) {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : new Date(ms);
  }
  return null;
}

/**
 * The observation time kept for a quote: the source's own, never later than the fetch (a clock ahead of
 * ours cannot make a price look fresher than it is); the fetch time only when the source gives none.
 */
export function observedAt(value: unknown, fetchedAt: Date): Date | null {
  const t = sourceTime(value);
  if (t === undefined) return fetchedAt;
  if (t === null) return null;
  return t.getTime() > fetchedAt.getTime() ? fetchedAt : t;
}

/** Token prices from any HTTP JSON API, read through a mapping (see SourceMapping). */
export function mappedFeed(options: MappedFeedOptions): Feed {
  const fiats = options.fiats.map((f) => f.toUpperCase());
  return {
    name: options.name,
    async fetch(): Promise<FeedResult> {
      const url = substitute(options.url, {
        ids: Object.values(options.ids).map(encodeURIComponent).join(','),
        fiats: fiats.map((f) => f.toLowerCase()).join(','),
        FIATS: fiats.join(','),
      });
      const body = await fetchJson(url, options);
      if (typeof body !== 'object' || body === null) throw new FeedError('Price API answer is not an object');
      const fetchedAt = new Date();
      const quotes: FeedResult['quotes'] = [];
      for (const [token, id] of Object.entries(options.ids))
        for (const fiat of fiats) {
          const vars = { id, fiat: fiat.toLowerCase(), FIAT: fiat };
          const text = decimalText(valueAt(body, options.price, vars));
          const fixed = text ? parseDecimal(plainDecimal(text) ?? '') : null;
          if (!fixed) continue;
          const at = observedAt(options.time ? valueAt(body, options.time, vars) : undefined, fetchedAt);
          if (!at) continue; // a time we cannot read: the quote is not trusted
          quotes.push({
            token,
            fiat,
            observation: {
              amount: fixed.amount.toString(),
              decimals: fixed.decimals,
              source: options.name,
              observedAt: at,
            },
          });
        }
      if (quotes.length === 0) throw new FeedError('Price API answer held no usable prices');
      return { quotes, fx: [] };
    },
  };
}
