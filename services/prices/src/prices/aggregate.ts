import { rescale } from '../kernel/decimal';
import type { Observation } from '../kernel/observation';

/** How several sources of one pair become the served price. */
export interface AggregationRule {
  /** Fewest agreeing fresh market sources that make a price (PRICE_SOURCE_QUORUM). */
  quorum: number;
  /** A source further than this from the median, in basis points of it, is left out (PRICE_MAX_DEVIATION_PERCENT). */
  maxDeviationBps: number;
}

/** Sources that are not a market: an operator's price, and the demo seed. */
export const MANUAL = 'manual';
export const SEED = 'seed';

export type Aggregate =
  | {
      ok: true;
      observation: Observation;
      /** Sources used, and market sources left out for deviating from the median. */
      used: string[];
      deviating: string[];
      /** Last instant the result holds: the first expiry of any fresh source considered. */
      validUntil: number;
    }
  | { ok: false; reason: string | null; deviating: string[]; validUntil: number };

/** The median of fixed-point values (on the most decimals among them); an even count averages the middle two, half up. */
export function median(values: Observation[]): { amount: bigint; decimals: number } {
  const decimals = Math.max(...values.map((v) => v.decimals));
  const amounts = values
    .map((v) => rescale({ amount: BigInt(v.amount), decimals: v.decimals }, decimals).amount)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const mid = amounts.length >> 1;
  const amount = amounts.length % 2 ? amounts[mid] : (amounts[mid - 1] + amounts[mid] + 1n) / 2n;
  return { amount, decimals };
}

const deviationOk = (o: Observation, m: { amount: bigint; decimals: number }, bps: number) => {
  const v = rescale({ amount: BigInt(o.amount), decimals: o.decimals }, m.decimals).amount;
  const diff = v > m.amount ? v - m.amount : m.amount - v;
  return diff * 10000n <= BigInt(bps) * m.amount;
};

/**
 * The served price of one pair from the latest quote of each of its sources:
 * - an operator's (manual) price newer than every other source's is served alone, until a feed sets a newer one;
 * - otherwise the market sources (every feed but the demo seed) that are fresh: their median; a source
 *   further than the bound from it is left out and the median taken again over the rest; fewer than the
 *   quorum left → no price (with the reason), never one source's word;
 * - with no fresh market source, the newest fresh of seed and manual (the demo setup, a hand-set price).
 * Freshness is judged on each source's own observation time.
 */
export function aggregate(latest: Observation[], rule: AggregationRule, maxAgeMs: number, now: number): Aggregate {
  const expiry = (o: Observation) => o.observedAt.getTime() + maxAgeMs;
  const fresh = latest.filter((o) => now <= expiry(o));
  const validUntil = Math.min(...fresh.map(expiry), Infinity);
  const newest = (list: Observation[]) =>
    list.reduce<Observation | undefined>((a, o) => (!a || o.observedAt > a.observedAt ? o : a), undefined);
  const manual = fresh.find((o) => o.source === MANUAL);
  const others = latest.filter((o) => o.source !== MANUAL);
  if (manual && others.every((o) => o.observedAt <= manual.observedAt))
    return { ok: true, observation: manual, used: [MANUAL], deviating: [], validUntil };
  const market = fresh.filter((o) => o.source !== MANUAL && o.source !== SEED);
  if (market.length === 0) {
    const fallback = newest(fresh);
    return fallback
      ? { ok: true, observation: fallback, used: [fallback.source], deviating: [], validUntil }
      : { ok: false, reason: null, deviating: [], validUntil };
  }
  const first = median(market);
  const kept = market.filter((o) => deviationOk(o, first, rule.maxDeviationBps));
  const deviating = market.filter((o) => !kept.includes(o)).map((o) => o.source);
  if (kept.length < Math.max(1, rule.quorum)) {
    const left = deviating.length ? `, ${deviating.length} left out for deviating from the median` : '';
    return {
      ok: false,
      reason: `${kept.length} of ${market.length} fresh sources agree${left}; ${rule.quorum} needed`,
      deviating,
      validUntil,
    };
  }
  const m = median(kept);
  const observedAt = new Date(Math.min(...kept.map((o) => o.observedAt.getTime())));
  return {
    ok: true,
    observation: {
      amount: m.amount.toString(),
      decimals: m.decimals,
      source: kept.length === 1 ? kept[0].source : `median:${kept.map((o) => o.source).join('+')}`,
      observedAt,
    },
    used: kept.map((o) => o.source),
    deviating,
    validUntil,
  };
}
