import { createHash } from 'node:crypto';

/** The served price of one pair: a direct quote (or the median of its sources), or a cross rate. */
export interface Price {
  token: string;
  fiat: string;
  amount: string;
  decimals: number;
  observedAt: Date;
  source: string;
}

/** A 200 answer of the price endpoints, built once: the body bytes and its validators. */
export interface PriceAnswer {
  body: Buffer;
  etag: string;
  /** HTTP date (whole seconds) of the newest observation used. */
  lastModified: string;
  lastModifiedMs: number;
  /** ISO 8601 time of the oldest observation used: the answer is "as of" then (X-Observed-At). */
  observedAt: string;
}

type PriceObject = { asset: string; amount: string; decimals: number; symbol: string };

/**
 * SPEC 2.6: result.prices.<TOKEN>.<FIAT> = {asset, amount, decimals, symbol}, in the order asked; beside
 * `prices`, result.observed_at.<TOKEN>.<FIAT> is when the price's sources observed it (ISO 8601), and
 * `extra` adds further members to `result` (the opt-in change).
 */
export function buildAnswer(list: Price[], extra: Record<string, unknown> = {}): PriceAnswer {
  const prices: Record<string, Record<string, PriceObject>> = {};
  const observed: Record<string, Record<string, string>> = {};
  for (const p of list) {
    (prices[p.token] ??= {})[p.fiat] = { asset: p.fiat, amount: p.amount, decimals: p.decimals, symbol: p.fiat };
    (observed[p.token] ??= {})[p.fiat] = p.observedAt.toISOString();
  }
  const text = JSON.stringify({ result: { prices, observed_at: observed, ...extra } });
  const times = list.map((p) => p.observedAt.getTime());
  const lastModified = new Date(Math.max(...times));
  lastModified.setMilliseconds(0);
  return {
    body: Buffer.from(text),
    etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`,
    lastModified: lastModified.toUTCString(),
    lastModifiedMs: lastModified.getTime(),
    observedAt: new Date(Math.min(...times)).toISOString(),
  };
}
