import type Redis from 'ioredis';
import { RedisCache, type Cache } from '../cache';
import { errors } from '../errors';

/** At most `limit` failures per key in a fixed window of `windowSeconds`. */
export interface FailurePolicy {
  /** Names the policy in the RateLimit fields and in storage keys. */
  name: string;
  limit: number;
  windowSeconds: number;
  /**
   * The name of another policy of the same limiter: this one refuses a request only when the request's
   * key under that policy has failed at least once in its window. For a key anyone can spend (a client
   * id, an API key id: public), so that failures sent from elsewhere never refuse an address that sent
   * none: past the limit, every address that failed is refused, and each new one fails once at most.
   */
  refusesOnlyAfter?: string;
}

/** The key each policy counts a request under (an id or an address, never a secret); none: it does not apply. */
export type FailureKeys = Readonly<Record<string, string | undefined>>;

export interface PolicyState {
  policy: FailurePolicy;
  remaining: number;
  resetMs: number;
}

/** What counting one failure found: every applicable policy's state, and the first one now over its limit. */
export interface FailureCount {
  states: PolicyState[];
  exceeded: PolicyState | null;
}

/** One attempt holding a slot under every applicable policy, taken before its secret is checked. */
export interface Attempt {
  /** The secret was right: the slot is given back, and the counts of the policies named in `forget` are cleared. */
  succeeded(forget?: readonly string[]): Promise<void>;
  /** The secret was wrong: the slot stays taken, as one counted failure. */
  failed(): Promise<FailureCount>;
}

/** Either a slot for the attempt, or the state of the first policy that refuses it. */
export type Admission = { attempt: Attempt; refused?: undefined } | { refused: PolicyState; attempt?: undefined };

/** What `checkNow` did: refused the attempt, or ran the check, which passed or failed (and was counted). */
export type CheckOutcome =
  | { outcome: 'refused'; refused: PolicyState }
  | { outcome: 'passed' }
  | { outcome: 'failed'; count: Promise<FailureCount> };

/** A policy's key in the store, with its limit and window. */
interface StoreKey {
  key: string;
  limit: number;
  windowMs: number;
  /** Refuses only when the key at this index (of the same operation; -1: none, never) has a count above zero. */
  onlyAfter?: number;
}

/** A count in the store and the milliseconds left in its window. */
interface Stored {
  count: number;
  ttlMs: number;
}

/** The shared counts: every operation on several keys is atomic. */
interface FailureStore {
  /** Adds one to every key if each is below its limit; else changes nothing and names the first at its limit. */
  reserve(keys: StoreKey[]): Promise<{ counts: Stored[] } | { full: number; stored: Stored }>;
  /** Adds one to every key. */
  add(keys: StoreKey[]): Promise<Stored[]>;
  /** Takes one off each key in `release` (never below zero) and deletes each key in `remove`. */
  settle(release: string[], remove: string[]): Promise<void>;
}

/** This process's knowledge of one key: failures the store confirmed, failures on their way, attempts checking. */
interface Local {
  stored: number;
  pending: number;
  inFlight: number;
  resetAt: number;
  waiters: (() => void)[];
}

interface Counter {
  policy: FailurePolicy;
  prefix: string;
  local: Map<string, Local>;
}

interface Applicable {
  counter: Counter;
  key: string;
}

const SWEEP_AT = 10000;

/**
 * Counts failed attempts (wrong secrets, unknown keys, bad passwords) under several policies, in Redis
 * when the service has Redis (so replicas share the counts), in process memory otherwise. A slot is taken
 * before a secret is checked and given back when it was right, so parallel attempts never check more
 * secrets than a limit allows. Three ways to take it:
 *
 * - `reserve`: in the store, atomically for every policy (one round trip), so the limit holds across
 *   replicas exactly. For checks that cost more than a round trip anyway (password hashing, passkeys).
 * - `checkNow`: for a check that runs synchronously (an HMAC comparison) after the record was looked up.
 *   In one tick it refuses a key at its limit as this process knows it, runs the check, and when the
 *   check fails counts the failure here before anything else can run, then in the store. A right secret
 *   touches nothing but this process's memory.
 * - `reserveHere`: for an asynchronous check on a hot path (a code exchange): the slot is taken in this
 *   process (attempts in flight count until they are settled; an attempt that would only exceed the
 *   limit because of others in flight waits for them instead of being refused), and only failures reach
 *   the store.
 *
 * With `checkNow` and `reserveHere` each process checks at most `limit` failing secrets per key and window
 * (its own failures, plus what the store reported when it counted them), so R replicas behind a load
 * balancer check at most R × limit; the stored count is the sum over all replicas.
 */
export class FailureLimiter {
  private readonly counters: Counter[];
  private readonly store: FailureStore;

  constructor(cache: Cache, scope: string, policies: FailurePolicy[]) {
    this.counters = policies.map((policy) => ({
      policy,
      prefix: `failures:${scope}:${policy.name}:`,
      local: new Map(),
    }));
    if (cache.mode === 'memory') this.store = new MemoryFailureStore();
    else if (cache instanceof RedisCache) this.store = new RedisFailureStore(cache);
    else throw new Error('failure limits need the Redis client of a RedisCache');
  }

  private applicable(keys: FailureKeys): Applicable[] {
    const out: Applicable[] = [];
    for (const counter of this.counters) {
      const key = keys[counter.policy.name];
      if (key !== undefined) out.push({ counter, key });
    }
    return out;
  }

  private storeKeys(applicable: Applicable[]): StoreKey[] {
    return applicable.map(({ counter, key }) => {
      const after = counter.policy.refusesOnlyAfter;
      const onlyAfter = after === undefined ? -1 : applicable.findIndex((a) => a.counter.policy.name === after);
      return {
        key: counter.prefix + key,
        limit: counter.policy.limit,
        windowMs: counter.policy.windowSeconds * 1000,
        ...(after === undefined ? {} : { onlyAfter }),
      };
    });
  }

  /**
   * Whether a policy may refuse this request: always, unless it refuses only after the request's own
   * failures under another policy (`refusesOnlyAfter`), as this process knows them.
   */
  private mayRefuse(counter: Counter, applicable: Applicable[], now: number): boolean {
    const after = counter.policy.refusesOnlyAfter;
    if (after === undefined) return true;
    const own = applicable.find((a) => a.counter.policy.name === after);
    const entry = own && this.local(own.counter, own.key, now, false);
    return entry !== undefined && entry.stored + entry.pending > 0;
  }

  /** This process's entry for a key, reset when its window has ended. */
  private local(counter: Counter, key: string, now: number, create: boolean): Local | undefined {
    let entry = counter.local.get(key);
    if (entry && entry.resetAt <= now && entry.stored + entry.pending > 0) {
      entry.stored = 0;
      if (entry.pending > 0) entry.resetAt = now + counter.policy.windowSeconds * 1000;
    }
    if (!entry && create) {
      if (counter.local.size >= SWEEP_AT) sweep(counter.local, now);
      entry = { stored: 0, pending: 0, inFlight: 0, resetAt: 0, waiters: [] };
      counter.local.set(key, entry);
    }
    return entry;
  }

  private tidy(counter: Counter, key: string, entry: Local): void {
    if (entry.stored + entry.pending + entry.inFlight === 0 && entry.waiters.length === 0) counter.local.delete(key);
  }

  private refusal(counter: Counter, entry: Local, now: number): PolicyState {
    return { policy: counter.policy, remaining: 0, resetMs: Math.max(entry.resetAt - now, 0) };
  }

  /** From process memory only: the first applicable policy whose key is at its limit, or null. */
  blocked(keys: FailureKeys, now = Date.now()): PolicyState | null {
    const applicable = this.applicable(keys);
    for (const { counter, key } of applicable) {
      const entry = this.local(counter, key, now, false);
      if (entry && entry.stored + entry.pending >= counter.policy.limit && this.mayRefuse(counter, applicable, now))
        return this.refusal(counter, entry, now);
    }
    return null;
  }

  /** Takes a slot in the store for every applicable policy, atomically; refused when one is at its limit. */
  async reserve(keys: FailureKeys): Promise<Admission> {
    const applicable = this.applicable(keys);
    const storeKeys = this.storeKeys(applicable);
    const result = await inStore(() => this.store.reserve(storeKeys));
    if ('full' in result)
      return { refused: { ...stateOf(applicable[result.full].counter.policy, result.stored), remaining: 0 } };
    const states = applicable.map(({ counter }, i) => stateOf(counter.policy, result.counts[i]));
    let settled = false;
    const settle = () => {
      if (settled) throw new Error('an attempt is settled once');
      settled = true;
    };
    return {
      attempt: {
        succeeded: async (forget = []) => {
          settle();
          const remove = applicable.filter(({ counter }) => forget.includes(counter.policy.name));
          this.forgetHere(remove);
          const release = storeKeys.filter((_k, i) => !remove.includes(applicable[i]));
          await inStore(() =>
            this.store.settle(
              release.map((k) => k.key),
              this.storeKeys(remove).map((k) => k.key),
            ),
          );
        },
        failed: async () => {
          settle();
          return { states, exceeded: null };
        },
      },
    };
  }

  /**
   * For a synchronous check: refuses while a key is at its limit as this process knows it, else runs
   * `check` and, when it fails, counts the failure in this process in the same tick and then in the store.
   */
  checkNow(keys: FailureKeys, check: () => boolean): CheckOutcome {
    const now = Date.now();
    const applicable = this.applicable(keys);
    for (const { counter, key } of applicable) {
      const entry = this.local(counter, key, now, false);
      if (
        entry &&
        entry.stored + entry.pending + entry.inFlight >= counter.policy.limit &&
        this.mayRefuse(counter, applicable, now)
      )
        return { outcome: 'refused', refused: this.refusal(counter, entry, now) };
    }
    if (check()) return { outcome: 'passed' };
    return { outcome: 'failed', count: this.countFailure(applicable, now) };
  }

  /**
   * Takes a slot in this process for an asynchronous check (see the class comment): refused when a key is
   * at its limit, waits while only attempts in flight fill it.
   */
  reserveHere(keys: FailureKeys): Admission | Promise<Admission> {
    const now = Date.now();
    const applicable = this.applicable(keys);
    const entries = applicable.map(({ counter, key }) => this.local(counter, key, now, true)!);
    for (const [i, entry] of entries.entries()) {
      const { counter } = applicable[i];
      if (entry.stored + entry.pending >= counter.policy.limit && this.mayRefuse(counter, applicable, now)) {
        for (const [j, e] of entries.entries()) this.tidy(applicable[j].counter, applicable[j].key, e);
        return { refused: this.refusal(counter, entry, now) };
      }
    }
    const busy = entries.find(
      (e, i) =>
        e.stored + e.pending + e.inFlight >= applicable[i].counter.policy.limit &&
        this.mayRefuse(applicable[i].counter, applicable, now),
    );
    if (busy) return new Promise((resolve) => busy.waiters.push(() => resolve(this.reserveHere(keys))));
    for (const entry of entries) entry.inFlight++;
    let settled = false;
    const leave = () => {
      if (settled) throw new Error('an attempt is settled once');
      settled = true;
      for (const entry of entries) entry.inFlight--;
    };
    const wake = () => {
      for (const [i, entry] of entries.entries()) {
        const waiting = entry.waiters.splice(0);
        this.tidy(applicable[i].counter, applicable[i].key, entry);
        for (const waiter of waiting) waiter();
      }
    };
    return {
      attempt: {
        succeeded: async (forget = []) => {
          leave();
          wake();
          const remove = applicable.filter(({ counter }) => forget.includes(counter.policy.name));
          if (remove.length > 0) await this.forgetAll(remove);
        },
        failed: async () => {
          leave();
          const count = this.countFailure(applicable, Date.now());
          wake();
          return count;
        },
      },
    };
  }

  /** Counts one failure under every applicable policy, here at once and then in the store. */
  private countFailure(applicable: Applicable[], now: number): Promise<FailureCount> {
    const entries = applicable.map(({ counter, key }) => {
      const entry = this.local(counter, key, now, true)!;
      if (entry.stored + entry.pending === 0) entry.resetAt = now + counter.policy.windowSeconds * 1000;
      entry.pending++;
      return entry;
    });
    const storeKeys = this.storeKeys(applicable);
    const settlePending = () => {
      for (const entry of entries) entry.pending--;
    };
    return inStore(() => this.store.add(storeKeys)).then(
      (counts) => {
        settlePending();
        const done = Date.now();
        const states = applicable.map(({ counter, key }, i) => {
          this.learn(counter, key, counts[i], done);
          return stateOf(counter.policy, counts[i]);
        });
        const exceeded = states.find((s, i) => counts[i].count > s.policy.limit) ?? null;
        return { states, exceeded };
      },
      (err: unknown) => {
        settlePending();
        for (const [i, entry] of entries.entries()) this.tidy(applicable[i].counter, applicable[i].key, entry);
        throw err;
      },
    );
  }

  /** Counts one failure under every applicable policy (without a slot taken before). */
  recordFailure(keys: FailureKeys): Promise<FailureCount> {
    return this.countFailure(this.applicable(keys), Date.now());
  }

  /** What the store said about a key: this process refuses it from memory once it is at its limit. */
  private learn(counter: Counter, key: string, stored: Stored, now: number): void {
    const entry = this.local(counter, key, now, true)!;
    entry.stored = Math.max(entry.stored, stored.count);
    entry.resetAt = now + Math.max(stored.ttlMs, 0);
    this.tidy(counter, key, entry);
  }

  /** Forgets what this process knows of these keys' failures (attempts in flight stay counted). */
  private forgetHere(remove: Applicable[]): void {
    for (const { counter, key } of remove) {
      const entry = counter.local.get(key);
      if (entry) {
        entry.stored = 0;
        this.tidy(counter, key, entry);
      }
    }
  }

  private async forgetAll(remove: Applicable[]): Promise<void> {
    this.forgetHere(remove);
    const keys = this.storeKeys(remove).map((k) => k.key);
    await inStore(() => this.store.settle([], keys));
  }

  /** Forgets the failures of one key under one policy (e.g. a user's, after a successful sign-in). */
  async forget(policyName: string, key: string): Promise<void> {
    const counter = this.counters.find((c) => c.policy.name === policyName);
    if (counter) await this.forgetAll([{ counter, key }]);
  }
}

/** Runs store commands; any store failure becomes 503 service_unavailable. */
async function inStore<T>(commands: () => Promise<T>): Promise<T> {
  try {
    return await commands();
  } catch (err) {
    throw errors.unavailable('cache', err);
  }
}

function stateOf(policy: FailurePolicy, stored: Stored): PolicyState {
  return { policy, remaining: Math.max(policy.limit - stored.count, 0), resetMs: Math.max(stored.ttlMs, 0) };
}

function sweep(local: Map<string, Local>, now: number): void {
  for (const [key, entry] of local)
    if (entry.pending + entry.inFlight === 0 && entry.waiters.length === 0 && entry.resetAt <= now) local.delete(key);
}

/** Counts in this process (embedded mode): every operation is synchronous, hence atomic. */
class MemoryFailureStore implements FailureStore {
  private readonly counts = new Map<string, { count: number; resetAt: number }>();

  private live(key: string, now: number) {
    const entry = this.counts.get(key);
    if (entry && entry.resetAt <= now) {
      this.counts.delete(key);
      return undefined;
    }
    return entry;
  }

  private increment(k: StoreKey, now: number): Stored {
    let entry = this.live(k.key, now);
    if (!entry) {
      if (this.counts.size >= SWEEP_AT)
        for (const [key, e] of this.counts) if (e.resetAt <= now) this.counts.delete(key);
      entry = { count: 0, resetAt: now + k.windowMs };
      this.counts.set(k.key, entry);
    }
    entry.count++;
    return { count: entry.count, ttlMs: entry.resetAt - now };
  }

  reserve(keys: StoreKey[]) {
    const now = Date.now();
    for (const [i, k] of keys.entries()) {
      const entry = this.live(k.key, now);
      const own = k.onlyAfter === undefined ? undefined : keys[k.onlyAfter];
      const mayRefuse = k.onlyAfter === undefined || (own !== undefined && (this.live(own.key, now)?.count ?? 0) > 0);
      if (entry && entry.count >= k.limit && mayRefuse)
        return Promise.resolve({ full: i, stored: { count: entry.count, ttlMs: entry.resetAt - now } });
    }
    return Promise.resolve({ counts: keys.map((k) => this.increment(k, now)) });
  }

  add(keys: StoreKey[]) {
    const now = Date.now();
    return Promise.resolve(keys.map((k) => this.increment(k, now)));
  }

  settle(release: string[], remove: string[]) {
    const now = Date.now();
    for (const key of release) {
      const entry = this.live(key, now);
      if (entry && entry.count > 0) entry.count--;
    }
    for (const key of remove) this.counts.delete(key);
    return Promise.resolve();
  }
}

/*
 * Lua scripts, so that checking and counting are one step in Redis (replicas share the counts).
 * KEYS are the policies' keys; ARGV holds each key's limit, window (ms) and the 1-based index of the key
 * whose count must be above zero for it to refuse (0: none; -1: it never refuses), in turn.
 */
const RESERVE = `
for i, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  local after = tonumber(ARGV[3 * i])
  if count >= tonumber(ARGV[3 * i - 2])
    and (after == 0 or (after > 0 and tonumber(redis.call('GET', KEYS[after]) or '0') > 0)) then
    return {0, i, count, redis.call('PTTL', key)}
  end
end
local out = {1}
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  local ttl = redis.call('PTTL', key)
  if count == 1 or ttl < 0 then redis.call('PEXPIRE', key, ARGV[3 * i - 1]) ttl = tonumber(ARGV[3 * i - 1]) end
  out[#out + 1] = count
  out[#out + 1] = ttl
end
return out`;

const ADD = `
local out = {}
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  local ttl = redis.call('PTTL', key)
  if count == 1 or ttl < 0 then redis.call('PEXPIRE', key, ARGV[3 * i - 1]) ttl = tonumber(ARGV[3 * i - 1]) end
  out[#out + 1] = count
  out[#out + 1] = ttl
end
return out`;

/** ARGV[1]: how many of KEYS (the first ones) to release; the rest are deleted. */
const SETTLE = `
local release = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  if i <= release then
    if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
  else
    redis.call('DEL', key)
  end
end
return 0`;

class RedisFailureStore implements FailureStore {
  constructor(private readonly cache: RedisCache) {}

  private async eval(script: string, keys: string[], args: (string | number)[]): Promise<number[]> {
    await this.cache.whenReady();
    const redis: Redis = this.cache.redis;
    return (await redis.eval(script, keys.length, ...keys, ...args)) as number[];
  }

  private static limits(keys: StoreKey[]): number[] {
    // the key that must have failed, 1-based; 0: none; -1: it is not in this operation (never refuses)
    const after = (k: StoreKey) => (k.onlyAfter === undefined ? 0 : k.onlyAfter < 0 ? -1 : k.onlyAfter + 1);
    return keys.flatMap((k) => [k.limit, k.windowMs, after(k)]);
  }

  private static pairs(flat: number[]): Stored[] {
    const out: Stored[] = [];
    for (let i = 0; i < flat.length; i += 2) out.push({ count: flat[i], ttlMs: flat[i + 1] });
    return out;
  }

  async reserve(keys: StoreKey[]) {
    if (keys.length === 0) return { counts: [] };
    const result = await this.eval(
      RESERVE,
      keys.map((k) => k.key),
      RedisFailureStore.limits(keys),
    );
    if (result[0] === 0) return { full: result[1] - 1, stored: { count: result[2], ttlMs: result[3] } };
    return { counts: RedisFailureStore.pairs(result.slice(1)) };
  }

  async add(keys: StoreKey[]) {
    if (keys.length === 0) return [];
    return RedisFailureStore.pairs(
      await this.eval(
        ADD,
        keys.map((k) => k.key),
        RedisFailureStore.limits(keys),
      ),
    );
  }

  async settle(release: string[], remove: string[]) {
    if (release.length + remove.length === 0) return;
    await this.eval(SETTLE, [...release, ...remove], [release.length]);
  }
}
