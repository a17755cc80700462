import { createHash } from 'node:crypto';
import type { Price } from './prices';

/** A 200 answer of the price endpoints, built once: the body bytes and its validators. */
export interface PriceAnswer {
  body: Buffer;
  etag: string;
  /** HTTP date (whole seconds) of the newest observation used. */
  lastModified: string;
  lastModifiedMs: number;
}

/** SPEC 2.6: result.prices.<TOKEN>.<FIAT> = {asset, amount, decimals, symbol}, in the order asked. */
export function buildAnswer(list: Price[]): PriceAnswer {
  const result: Record<
    string,
    Record<string, { asset: string; amount: string; decimals: number; symbol: string }>
  > = {};
  for (const p of list)
    (result[p.token] ??= {})[p.fiat] = { asset: p.fiat, amount: p.amount, decimals: p.decimals, symbol: p.fiat };
  const text = JSON.stringify({ result: { prices: result } });
  const lastModified = new Date(Math.max(...list.map((p) => p.observedAt.getTime())));
  lastModified.setMilliseconds(0);
  return {
    body: Buffer.from(text),
    etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`,
    lastModified: lastModified.toUTCString(),
    lastModifiedMs: lastModified.getTime(),
  };
}
