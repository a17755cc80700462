import { AppError, errors, LocalCache, type InvalidationBus } from '@attest/common';
import type { FeedResult } from '../feeds/feed';
import type { Observation, PriceStore } from '../store/price-store';
import { MIN_DECIMALS, multiply, type Fixed } from './decimal';
import { buildAnswer, type PriceAnswer } from './price-answer';

export interface Price {
  token: string;
  fiat: string;
  amount: string;
  decimals: number;
  observedAt: Date;
  source: string;
}

/** The latest quotes and FX rates and the known codes, as loaded at one moment. */
interface PriceSnapshot {
  tokens: Set<string>;
  fiats: Set<string>;
  /** By `TOKEN/FIAT`. */
  quotes: Map<string, Observation>;
  fx: Map<string, Observation>;
  /** Answers computed from this snapshot, by query; each only until its first input turns stale. */
  answers: Map<string, CachedAnswer>;
}

interface CachedAnswer {
  outcome: { answer: PriceAnswer } | { error: AppError };
  /** Last instant (ms) at which every price used is still fresh. */
  validUntil: number;
}

export interface PriceServiceOptions {
  /** Backstop reload of the snapshot, for a missed bus message. */
  reloadMs?: number;
  /** The clock freshness is judged by. */
  now?: () => number;
}

/** Bus name of the snapshot cache: a message on it makes every replica reload. */
export const PRICE_SNAPSHOT_CACHE = 'price-snapshot';
const SNAPSHOT = 'latest';
const MAX_ANSWERS = 1000;

const fixed = (o: Observation): Fixed => ({ amount: BigInt(o.amount), decimals: o.decimals });

export const priceUnavailable = (pairs: string[]) =>
  new AppError('price_unavailable', 503, `No fresh price for ${pairs.join(', ')}; try again later.`, null, {
    headers: { 'Retry-After': '30' },
  });

/**
 * Latest prices: a direct quote when fresh, else a cross rate token/USD × USD/fiat when both are fresh.
 * The latest values live in a process-wide snapshot, reloaded after every write here or on another
 * replica (bus) and periodically; the answer to a query is computed once per snapshot and kept
 * until the first price it used turns stale, so a stale price is never served.
 */
export class PriceService {
  private readonly snapshots: LocalCache<PriceSnapshot>;
  private readonly now: () => number;
  /** The last snapshot loaded, served while a reload fails (each price is still judged fresh or not). */
  private lastGood: PriceSnapshot | undefined;

  constructor(
    private readonly store: PriceStore,
    bus: InvalidationBus,
    private readonly maxAgeMs: number,
    options: PriceServiceOptions = {},
  ) {
    this.snapshots = new LocalCache<PriceSnapshot>(bus, {
      name: PRICE_SNAPSHOT_CACHE,
      ttlMs: options.reloadMs ?? 30000,
      max: 1,
    });
    this.now = options.now ?? Date.now;
  }

  /**
   * The current snapshot. While the database cannot be read, the last one loaded keeps serving: its
   * prices are judged against the clock like any other, so a price past its age is still refused.
   */
  private async snapshot(): Promise<PriceSnapshot> {
    try {
      const loaded = (await this.snapshots.get(SNAPSHOT, () => this.load()))!;
      this.lastGood = loaded;
      return loaded;
    } catch (err) {
      if (this.lastGood) return this.lastGood;
      throw err;
    }
  }

  /** Readiness: the current snapshot (or, without the database, the last one) holds a fresh price of the token. */
  async assertFreshInSnapshot(token: string, fiat = 'USD'): Promise<void> {
    await this.snapshot().catch(() => undefined);
    const quote = this.lastGood?.quotes.get(`${token}/${fiat}`);
    if (!this.fresh(quote, this.now())) throw new Error(`no fresh ${token}/${fiat} price in memory`);
  }

  private async load(): Promise<PriceSnapshot> {
    const tokens = new Set(await this.store.tokens());
    const fiats = new Set(await this.store.fiats());
    const quotes = new Map((await this.store.latestQuotes()).map((q) => [`${q.token}/${q.fiat}`, q] as const));
    const fx = new Map((await this.store.latestFxRates()).map((r) => [r.fiat, r] as const));
    return { tokens, fiats, quotes, fx, answers: new Map() };
  }

  async codes(): Promise<{ tokens: Set<string>; fiats: Set<string> }> {
    const { tokens, fiats } = await this.snapshot();
    return { tokens, fiats };
  }

  async recordQuote(token: string, fiat: string, o: Observation): Promise<void> {
    await this.record({ quotes: [{ token, fiat, observation: o }], fx: [] });
  }

  async recordFx(fiat: string, o: Observation): Promise<void> {
    await this.record({ quotes: [], fx: [{ fiat, observation: o }] });
  }

  /** Stores the observations, then has this process and every replica reload (once for the batch). */
  async record(result: FeedResult): Promise<void> {
    try {
      for (const q of result.quotes) await this.store.insertQuote(q.token, q.fiat, q.observation);
      for (const r of result.fx) await this.store.insertFx(r.fiat, r.observation);
    } finally {
      await this.snapshots.invalidate(SNAPSHOT);
    }
  }

  private expiry(o: Observation): number {
    return o.observedAt.getTime() + this.maxAgeMs;
  }

  private fresh(o: Observation | undefined, now: number): o is Observation {
    return o !== undefined && now <= this.expiry(o);
  }

  private price(
    s: PriceSnapshot,
    token: string,
    fiat: string,
    now: number,
  ): { price: Price; validUntil: number } | null {
    const direct = s.quotes.get(`${token}/${fiat}`);
    if (this.fresh(direct, now)) return { price: { token, fiat, ...direct }, validUntil: this.expiry(direct) };
    if (fiat === 'USD') return null;
    const usd = s.quotes.get(`${token}/USD`);
    const fx = s.fx.get(fiat);
    if (!this.fresh(usd, now) || !this.fresh(fx, now)) return null;
    const cross = multiply(fixed(usd), fixed(fx), Math.max(MIN_DECIMALS, usd.decimals));
    const observedAt = usd.observedAt < fx.observedAt ? usd.observedAt : fx.observedAt;
    const price = {
      token,
      fiat,
      amount: cross.amount.toString(),
      decimals: cross.decimals,
      observedAt,
      source: `cross:${usd.source}*${fx.source}`,
    };
    return { price, validUntil: Math.min(this.expiry(usd), this.expiry(fx)) };
  }

  private compute(s: PriceSnapshot, tokens: string[], fiats: string[], now: number): CachedAnswer {
    const pairs = tokens.flatMap((t) => fiats.map((f) => [t, f] as const));
    const results = pairs.map(([t, f]) => this.price(s, t, f, now));
    const validUntil = Math.min(...results.map((r) => r?.validUntil ?? Infinity));
    const missing = pairs.filter((_, i) => !results[i]).map(([t, f]) => `${t}/${f}`);
    if (missing.length) return { outcome: { error: priceUnavailable(missing) }, validUntil };
    return { outcome: { answer: buildAnswer(results.map((r) => r!.price)) }, validUntil };
  }

  /** The answer for every pair, or 503 price_unavailable naming the pairs without a fresh price. */
  async answer(tokens: string[], fiats: string[]): Promise<PriceAnswer> {
    const s = await this.snapshot();
    const now = this.now();
    const key = `${tokens.join(',')}|${fiats.join(',')}`;
    let cached = s.answers.get(key);
    if (!cached || now > cached.validUntil) {
      cached = this.compute(s, tokens, fiats, now);
      if (s.answers.size >= MAX_ANSWERS) s.answers.clear();
      s.answers.set(key, cached);
    }
    if ('error' in cached.outcome) throw cached.outcome.error;
    return cached.outcome.answer;
  }

  /** Validates comma-separated codes against the known set; 400 naming the first unknown. */
  async parseCodes(raw: string, kind: 'tokens' | 'fiats', attribute: string): Promise<string[]> {
    const codes = [
      ...new Set(
        raw
          .split(',')
          .map((c) => c.trim().toUpperCase())
          .filter(Boolean),
      ),
    ];
    if (codes.length === 0) throw errors.required(attribute);
    if (codes.length > 50) throw errors.invalidParameter(attribute, `${attribute} may list at most 50 codes.`);
    const known = (await this.codes())[kind];
    const unknown = codes.find((c) => !known.has(c));
    if (unknown)
      throw errors.invalidParameter(
        attribute,
        `Unknown ${kind === 'fiats' ? 'fiat currency' : 'token'} code: ${unknown}.`,
      );
    return codes;
  }
}
