import { parseDecimal } from '../kernel/decimal';
import type { Feed, FeedResult } from './feed';
import { observedAt as observedAtOf } from './mapped-feed';
import { decimalText, fetchJson, FeedError, plainDecimal, type HttpOptions } from './http-json';

export interface FxFeedOptions extends HttpOptions {
  /** URL returning the common `{ "base": "USD", "rates": { "EUR": 0.92, … } }` shape. */
  url: string;
}

/** USD → fiat exchange rates, for cross rates to every ISO currency the source covers, dated by the source. */
export function fxFeed(options: FxFeedOptions): Feed {
  return {
    name: 'fx',
    async fetch(): Promise<FeedResult> {
      const body = (await fetchJson(options.url, options)) as {
        base?: unknown;
        base_code?: unknown;
        rates?: unknown;
        time_last_update_unix?: unknown;
        timestamp?: unknown;
      } | null;
      const base = body?.base ?? body?.base_code;
      if (base !== 'USD') throw new FeedError(`FX source base must be USD (got ${String(base)})`);
      if (typeof body?.rates !== 'object' || body.rates === null) throw new FeedError('FX answer has no rates object');
      // the source's own time when it gives one (open.er-api.com, fixer-like APIs); else the fetch time
      const observedAt = observedAtOf(body.time_last_update_unix ?? body.timestamp, new Date());
      if (!observedAt) throw new FeedError('FX answer has a time that is not a Unix time');
      const fx: FeedResult['fx'] = [];
      for (const [code, value] of Object.entries(body.rates as Record<string, unknown>)) {
        const text = decimalText(value);
        const fixed = text ? parseDecimal(plainDecimal(text) ?? '') : null;
        if (/^[A-Z]{3}$/.test(code) && fixed && fixed.amount > 0n)
          fx.push({
            fiat: code,
            observation: { amount: fixed.amount.toString(), decimals: fixed.decimals, source: 'fx', observedAt },
          });
      }
      if (fx.length === 0) throw new FeedError('FX answer held no usable rates');
      return { quotes: [], fx };
    },
  };
}
