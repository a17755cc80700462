import { createHash } from 'node:crypto';
import { rescale, toDecimalString } from '../kernel/decimal';
import type { Observation } from '../kernel/observation';
import { median } from './aggregate';
import type { Price } from './price-answer';
import type { PriceStore } from './price-store';

/** The ranges of GET /public/v1/prices/history/{token}: how far back, and the interval of the points. */
export const HISTORY_RANGES = {
  '24h': { ms: 24 * 3600_000, intervalSeconds: 300 },
  '7d': { ms: 7 * 24 * 3600_000, intervalSeconds: 3600 },
  '30d': { ms: 30 * 24 * 3600_000, intervalSeconds: 4 * 3600 },
} as const;
export type HistoryRange = keyof typeof HISTORY_RANGES;

/** The windows of the opt-in change; one is given only when a stored quote is old enough (history allows). */
export const CHANGE_WINDOWS = { '1h': 3600_000, '24h': 24 * 3600_000, '7d': 7 * 24 * 3600_000 } as const;
type ChangeWindow = keyof typeof CHANGE_WINDOWS;

/** A computed answer (history, change) is kept this long in memory: one store read per key per minute. */
const KEEP_MS = 60_000;
const MAX_ENTRIES = 2000;

export interface HistoryAnswer {
  body: Buffer;
  etag: string;
}

/** Per pair, the percentage change over each window history allows, e.g. { "24h": "-1.25" }. */
export type ChangeMap = Record<string, Record<string, Partial<Record<ChangeWindow, string>>>>;

/** (now - then) / then in percent, two decimals, half away from zero, as text ("-1.25", "0.00"). */
export function percentChange(now: Observation, then: Observation): string | null {
  const decimals = Math.max(now.decimals, then.decimals);
  const a = rescale({ amount: BigInt(now.amount), decimals: now.decimals }, decimals).amount;
  const b = rescale({ amount: BigInt(then.amount), decimals: then.decimals }, decimals).amount;
  if (b === 0n) return null;
  const diff = a - b;
  const abs = diff < 0n ? -diff : diff;
  const hundredths = (abs * 20000n + b) / (2n * b); // round(|diff| × 10000 / b)
  const text = toDecimalString({ amount: hundredths, decimals: 2 });
  const fixed = text.includes('.') ? text.padEnd(text.indexOf('.') + 3, '0') : `${text}.00`;
  return diff < 0n && hundredths > 0n ? `-${fixed}` : fixed;
}

interface Kept<T> {
  value: T;
  until: number;
}

/**
 * Stored quotes as a widget draws them: a history down-sampled to a stated interval, and the change over
 * 1 h / 24 h / 7 d. Both read the store once per key per minute and are otherwise answered from memory.
 */
export class PriceHistory {
  private readonly histories = new Map<string, Kept<Promise<HistoryAnswer>>>();
  private readonly references = new Map<string, Kept<Promise<Observation | null>>>();

  constructor(
    private readonly store: PriceStore,
    private readonly now: () => number = Date.now,
  ) {}

  private kept<T>(map: Map<string, Kept<Promise<T>>>, key: string, load: () => Promise<T>): Promise<T> {
    const now = this.now();
    const hit = map.get(key);
    if (hit && now <= hit.until) return hit.value;
    if (map.size >= MAX_ENTRIES) map.clear();
    const value = load();
    map.set(key, { value, until: now + KEEP_MS });
    value.catch(() => map.delete(key));
    return value;
  }

  /** Points from now - range to now, one per interval that holds quotes: the median of its sources' last values. */
  history(token: string, fiat: string, range: HistoryRange): Promise<HistoryAnswer> {
    return this.kept(this.histories, `${token}/${fiat}/${range}`, async () => {
      const { ms, intervalSeconds } = HISTORY_RANGES[range];
      const rows = await this.store.buckets(token, fiat, new Date(this.now() - ms), intervalSeconds);
      const byBucket = new Map<number, Observation[]>();
      for (const r of rows) byBucket.set(r.bucket, [...(byBucket.get(r.bucket) ?? []), r]);
      const points = [...byBucket].map(([bucket, list]) => {
        const m = median(list);
        return {
          t: new Date(bucket * intervalSeconds * 1000).toISOString(),
          amount: m.amount.toString(),
          decimals: m.decimals,
        };
      });
      const text = JSON.stringify({
        result: { token, fiat, range, interval_seconds: intervalSeconds, points },
      });
      return {
        body: Buffer.from(text),
        etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`,
      };
    });
  }

  /**
   * The change of each price over each window, against the newest stored quote observed at or before the
   * window's start, when that quote is no older than a twelfth of the window more (else history does not allow it).
   */
  async changes(prices: Price[]): Promise<ChangeMap> {
    const now = this.now();
    const result: ChangeMap = {};
    for (const p of prices) {
      const entry: Partial<Record<ChangeWindow, string>> = {};
      for (const [window, ms] of Object.entries(CHANGE_WINDOWS) as [ChangeWindow, number][]) {
        const start = now - ms;
        const minute = Math.floor(start / 60_000) * 60_000;
        const ref = await this.kept(this.references, `${p.token}/${p.fiat}/${window}`, () =>
          this.store.quoteAt(p.token, p.fiat, new Date(minute)),
        );
        if (!ref || ref.observedAt.getTime() < minute - ms / 12) continue;
        const pct = percentChange(p, ref);
        if (pct !== null) entry[window] = pct;
      }
      (result[p.token] ??= {})[p.fiat] = entry;
    }
    return result;
  }
}
