import { AppError, errors, invalidateAfterCommit, type Cache, type Logger } from '@attest/common';
import type { Observation, PriceStore } from '../store/price-store';
import { MIN_DECIMALS, multiply, type Fixed } from './decimal';

export interface Price {
  token: string;
  fiat: string;
  amount: string;
  decimals: number;
  observedAt: Date;
  source: string;
}

interface CachedObservation {
  amount: string;
  decimals: number;
  source: string;
  observedAt: string;
}

const CACHE_TTL_MS = 5 * 60 * 1000;
const encode = (o: Observation) => JSON.stringify({ ...o, observedAt: o.observedAt.toISOString() });
const decode = (raw: string): Observation => {
  const c = JSON.parse(raw) as CachedObservation;
  return { ...c, observedAt: new Date(c.observedAt) };
};
const fixed = (o: Observation): Fixed => ({ amount: BigInt(o.amount), decimals: o.decimals });

export const priceUnavailable = (pairs: string[]) =>
  new AppError('price_unavailable', 503, `No fresh price for ${pairs.join(', ')}; try again later.`, null, { headers: { 'Retry-After': '30' } });

/**
 * Latest prices: a direct quote when fresh, else a cross rate token/USD × USD/fiat when both are fresh.
 * Latest values live in the cache; writes update it at once, so the next request sees them. A committed
 * write is a success even when the cache cannot be reached (the old value is then invalidated, with retries).
 */
export class PriceService {
  private known?: { tokens: Set<string>; fiats: Set<string> };

  constructor(
    private readonly store: PriceStore,
    private readonly cache: Cache,
    private readonly maxAgeMs: number,
    private readonly logger: Logger,
  ) {}

  async codes(): Promise<{ tokens: Set<string>; fiats: Set<string> }> {
    this.known ??= { tokens: new Set(await this.store.tokens()), fiats: new Set(await this.store.fiats()) };
    return this.known;
  }

  async recordQuote(token: string, fiat: string, o: Observation): Promise<void> {
    await this.store.insertQuote(token, fiat, o);
    await this.remember(`quote:${token}:${fiat}`, o);
  }

  async recordFx(fiat: string, o: Observation): Promise<void> {
    await this.store.insertFx(fiat, o);
    await this.remember(`fx:${fiat}`, o);
  }

  /**
   * After a committed write: the new value goes into the cache (which keeps serving through a database
   * outage); when the cache cannot take it, the old value is invalidated instead, with retries.
   */
  private async remember(key: string, o: Observation): Promise<void> {
    try {
      await this.cache.set(key, encode(o), CACHE_TTL_MS);
    } catch {
      await invalidateAfterCommit(this.cache, [key], this.logger, { entryTtlMs: CACHE_TTL_MS });
    }
  }

  /** Readiness without the database: the cache holds a fresh price of the token (in USD, what widgets ask first). */
  async assertFreshInCache(token: string, fiat = 'USD', now = Date.now()): Promise<void> {
    const cached = await this.cache.get(`quote:${token}:${fiat}`);
    if (!cached || !this.fresh(decode(cached), now)) throw new Error(`no fresh ${token}/${fiat} price in the cache`);
  }

  private async latest(key: string, load: () => Promise<Observation | null>): Promise<Observation | null> {
    const cached = await this.cache.get(key);
    if (cached) return decode(cached);
    const found = await load();
    if (found) await this.cache.set(key, encode(found), CACHE_TTL_MS);
    return found;
  }

  private fresh(o: Observation | null, now: number): o is Observation {
    return o !== null && now - o.observedAt.getTime() <= this.maxAgeMs;
  }

  async price(token: string, fiat: string, now = Date.now()): Promise<Price | null> {
    const direct = await this.latest(`quote:${token}:${fiat}`, () => this.store.latestQuote(token, fiat));
    if (this.fresh(direct, now)) return { token, fiat, ...direct };
    if (fiat === 'USD') return null;
    const [usd, fx] = await Promise.all([
      this.latest(`quote:${token}:USD`, () => this.store.latestQuote(token, 'USD')),
      this.latest(`fx:${fiat}`, () => this.store.latestFx(fiat)),
    ]);
    if (!this.fresh(usd, now) || !this.fresh(fx, now)) return null;
    const cross = multiply(fixed(usd), fixed(fx), Math.max(MIN_DECIMALS, usd.decimals));
    const observedAt = usd.observedAt < fx.observedAt ? usd.observedAt : fx.observedAt;
    return { token, fiat, amount: cross.amount.toString(), decimals: cross.decimals, observedAt, source: `cross:${usd.source}*${fx.source}` };
  }

  /** Every pair, or 503 price_unavailable naming the pairs without a fresh price. */
  async prices(tokens: string[], fiats: string[]): Promise<Price[]> {
    const now = Date.now();
    const pairs = tokens.flatMap((t) => fiats.map((f) => [t, f] as const));
    const results = await Promise.all(pairs.map(([t, f]) => this.price(t, f, now)));
    const missing = pairs.filter((_, i) => !results[i]).map(([t, f]) => `${t}/${f}`);
    if (missing.length) throw priceUnavailable(missing);
    return results as Price[];
  }

  /** Validates comma-separated codes against the known set; 400 naming the first unknown. */
  async parseCodes(raw: string, kind: 'tokens' | 'fiats', attribute: string): Promise<string[]> {
    const codes = [...new Set(raw.split(',').map((c) => c.trim().toUpperCase()).filter(Boolean))];
    if (codes.length === 0) throw errors.required(attribute);
    if (codes.length > 50) throw errors.invalidParameter(attribute, `${attribute} may list at most 50 codes.`);
    const known = (await this.codes())[kind];
    const unknown = codes.find((c) => !known.has(c));
    if (unknown) throw errors.invalidParameter(attribute, `Unknown ${kind === 'fiats' ? 'fiat currency' : 'token'} code: ${unknown}.`);
    return codes;
  }
}
