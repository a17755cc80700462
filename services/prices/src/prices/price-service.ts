import { AppError, errors, LocalCache, type InvalidationBus } from '@attest/common';
import { MIN_DECIMALS, multiply, type Fixed } from '../kernel/decimal';
import type { FeedResult, Observation } from '../kernel/observation';
import { aggregate, type Aggregate, type AggregationRule } from './aggregate';
import { buildAnswer, type Price, type PriceAnswer } from './price-answer';
import type { PriceStore } from './price-store';

export interface SourceHealth {
  values: number;
  stale: number;
  /** `TOKEN/FIAT` pairs where this source's fresh quote is left out for deviating from the median. */
  deviating: string[];
  newestMs: number;
}

/** The latest quote of each source of each pair (by `TOKEN/FIAT`) and the latest FX rate of each fiat. */
export interface LatestValues {
  quotes: Map<string, Observation[]>;
  fx: Map<string, Observation>;
}

/** The latest quotes and FX rates and the known codes, as loaded at one moment. */
interface PriceSnapshot extends LatestValues {
  /** The write sequence's position read before the values (they are at least this recent; see PriceStore.version). */
  version: number;
  tokens: Set<string>;
  fiats: Set<string>;
  /** Answers computed from this snapshot, by query; each only until its first input turns stale. */
  answers: Map<string, CachedAnswer>;
  /** Queries parsed against this snapshot's codes, by their query string (see `parsedQuery`). */
  queries: Map<string, unknown>;
}

interface CachedAnswer {
  outcome: { answer: PriceAnswer; prices: Price[] } | { error: AppError };
  /** Last instant (ms) at which every price used is still fresh. */
  validUntil: number;
}

export interface PriceServiceOptions {
  /** Backstop reload of the snapshot, for a missed bus message. */
  reloadMs?: number;
  /** The clock freshness is judged by. */
  now?: () => number;
  /** How several sources make one price; by default one fresh source suffices and 5 % apart is deviating. */
  rule?: AggregationRule;
  /** Token code → its CAIP-19 asset id (PRICE_ASSET_IDS): a token may be named by either. */
  assetIds?: Record<string, string>;
}

export const DEFAULT_RULE: AggregationRule = { quorum: 1, maxDeviationBps: 500 };

/** Bus name of the snapshot cache: a message on it makes every replica reload. */
export const PRICE_SNAPSHOT_CACHE = 'price-snapshot';
const SNAPSHOT = 'latest';
const MAX_ANSWERS = 1000;

const fixed = (o: Observation): Fixed => ({ amount: BigInt(o.amount), decimals: o.decimals });

/** 503 naming the pairs; a pair whose sources are fresh but too few agree says so: `WLD/USD (1 of 2 fresh sources agree; 2 needed)`. */
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
  readonly rule: AggregationRule;
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
    this.rule = options.rule ?? DEFAULT_RULE;
    for (const [code, id] of Object.entries(options.assetIds ?? {})) this.byAssetId.set(id.toLowerCase(), code);
  }

  /** CAIP-19 asset id (lower case) → token code. */
  private readonly byAssetId = new Map<string, string>();

  /** One token, by code or CAIP-19 asset id; 400 naming `attribute` when unknown. */
  async resolveToken(raw: string, attribute: string): Promise<string> {
    if (raw.includes(',')) throw errors.invalidParameter(attribute, `${attribute} names one token.`);
    return (await this.parseCodes(raw, 'tokens', attribute))[0];
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
    const quotes = this.lastGood?.quotes.get(`${token}/${fiat}`) ?? [];
    if (!this.aggregated(quotes, this.now()).ok) throw new Error(`no fresh ${token}/${fiat} price in memory`);
  }

  private async load(): Promise<PriceSnapshot> {
    const version = await this.store.version();
    const tokens = new Set(await this.store.tokens());
    const fiats = new Set(await this.store.fiats());
    const quotes = new Map<string, Observation[]>();
    for (const q of await this.store.latestQuotes()) {
      const key = `${q.token}/${q.fiat}`;
      quotes.set(key, [...(quotes.get(key) ?? []), q]);
    }
    const fx = new Map((await this.store.latestFxRates()).map((r) => [r.fiat, r] as const));
    return { version, tokens, fiats, quotes, fx, answers: new Map(), queries: new Map() };
  }

  /** The write sequence's position of the current snapshot: the price stream's event ids carry it. */
  async version(): Promise<number> {
    return (await this.snapshot()).version;
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

  private aggregated(latest: Observation[], now: number): Aggregate {
    return aggregate(latest, this.rule, this.maxAgeMs, now);
  }

  /** A pair's price (direct, else cross), or why there is none (a reason when sources are fresh but too few agree). */
  private price(
    s: LatestValues,
    token: string,
    fiat: string,
    now: number,
  ): { price: Price; validUntil: number } | { reason: string | null; validUntil: number } {
    const direct = this.aggregated(s.quotes.get(`${token}/${fiat}`) ?? [], now);
    if (direct.ok) return { price: { token, fiat, ...direct.observation }, validUntil: direct.validUntil };
    if (fiat === 'USD') return direct;
    const usdPrice = this.aggregated(s.quotes.get(`${token}/USD`) ?? [], now);
    const fx = s.fx.get(fiat);
    if (!usdPrice.ok || !this.fresh(fx, now))
      return {
        reason: direct.reason ?? (usdPrice.ok ? null : usdPrice.reason),
        validUntil: Math.min(
          direct.validUntil,
          usdPrice.validUntil,
          fx && this.fresh(fx, now) ? this.expiry(fx) : Infinity,
        ),
      };
    const usd = usdPrice.observation;
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
    return { price, validUntil: Math.min(usdPrice.validUntil, direct.validUntil, this.expiry(fx)) };
  }

  private compute(s: LatestValues, tokens: string[], fiats: string[], now: number): CachedAnswer {
    const pairs = tokens.flatMap((t) => fiats.map((f) => [t, f] as const));
    const results = pairs.map(([t, f]) => this.price(s, t, f, now));
    const validUntil = Math.min(...results.map((r) => r.validUntil));
    const missing = pairs.flatMap(([t, f], i) => {
      const r = results[i];
      return 'price' in r ? [] : [r.reason ? `${t}/${f} (${r.reason})` : `${t}/${f}`];
    });
    if (missing.length) return { outcome: { error: priceUnavailable(missing) }, validUntil };
    const list = results.map((r) => (r as { price: Price }).price);
    return { outcome: { answer: buildAnswer(list), prices: list }, validUntil };
  }

  /** The answer (or why there is none) from given latest values, judged at `now`: the stream's replay of past writes. */
  answerFrom(
    values: LatestValues,
    tokens: string[],
    fiats: string[],
    now: number,
  ): { answer: PriceAnswer; prices: Price[] } | { error: AppError } {
    return this.compute(values, tokens, fiats, now).outcome;
  }

  /** The answer for every pair, or 503 price_unavailable naming the pairs without a fresh price. */
  async answer(tokens: string[], fiats: string[]): Promise<PriceAnswer> {
    return (await this.cached(tokens, fiats)).answer;
  }

  /**
   * The same answer with `result.change` (the opt-in change): built once per answer and kept until the
   * answer changes or a minute has passed.
   */
  async answerWithChange(
    tokens: string[],
    fiats: string[],
    changes: (prices: Price[]) => Promise<Record<string, unknown>>,
  ): Promise<PriceAnswer> {
    const base = await this.cached(tokens, fiats);
    const key = `${tokens.join(',')}|${fiats.join(',')}`;
    const now = this.now();
    let kept = this.withChange.get(key);
    if (!kept || kept.base !== base.answer || now > kept.until) {
      const answer = buildAnswer(base.prices, { change: await changes(base.prices) });
      if (this.withChange.size >= MAX_ANSWERS) this.withChange.clear();
      this.withChange.set(key, (kept = { base: base.answer, answer, until: now + 60_000 }));
    }
    return kept.answer;
  }

  private readonly withChange = new Map<string, { base: PriceAnswer; answer: PriceAnswer; until: number }>();

  private async cached(tokens: string[], fiats: string[]): Promise<{ answer: PriceAnswer; prices: Price[] }> {
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
    return cached.outcome;
  }

  /**
   * Per source, as the last snapshot loaded holds it: how many pairs it quotes, how many of those are
   * stale (by its own observation time), its newest observation, and the pairs where its fresh quote is
   * left out for deviating from the median of the others. Reads no store (metrics call it).
   */
  sourceHealth(): Map<string, SourceHealth> {
    const now = this.now();
    const health = new Map<string, SourceHealth>();
    for (const [pair, latest] of this.lastGood?.quotes ?? []) {
      const { deviating } = this.aggregated(latest, now);
      for (const o of latest) {
        let h = health.get(o.source);
        if (!h) health.set(o.source, (h = { values: 0, stale: 0, deviating: [], newestMs: 0 }));
        h.values++;
        if (!this.fresh(o, now)) h.stale++;
        if (deviating.includes(o.source)) h.deviating.push(pair);
        h.newestMs = Math.max(h.newestMs, o.observedAt.getTime());
      }
    }
    return health;
  }

  /** sourceHealth after loading the current snapshot. */
  async currentSourceHealth(): Promise<Map<string, SourceHealth>> {
    await this.snapshot().catch(() => undefined);
    return this.sourceHealth();
  }

  /**
   * A query parsed once per snapshot for each distinct query string: `parse` (which validates it and
   * checks its codes against this snapshot's) runs the first time a query string is seen, and its
   * result serves the same string again until the snapshot is reloaded (a code added or removed is
   * seen then). A query that fails to parse is not kept: it fails again, the same way, each time.
   * A widget polls one URL, so the hot path skips the query's parsing and checks.
   */
  async parsedQuery<T>(queryString: string, parse: () => Promise<T>): Promise<T> {
    const s = await this.snapshot();
    if (s.queries.has(queryString)) return s.queries.get(queryString) as T;
    const parsed = await parse();
    if (s.queries.size >= MAX_ANSWERS) s.queries.clear();
    s.queries.set(queryString, parsed);
    return parsed;
  }

  /** Validates comma-separated codes against the known set; 400 naming the first unknown. */
  async parseCodes(raw: string, kind: 'tokens' | 'fiats', attribute: string): Promise<string[]> {
    const codes = [
      ...new Set(
        raw
          .split(',')
          .map((c) => c.trim())
          .map((c) =>
            kind === 'tokens' && c.includes(':') ? (this.byAssetId.get(c.toLowerCase()) ?? c) : c.toUpperCase(),
          )
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
