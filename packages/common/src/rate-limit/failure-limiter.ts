import { RedisCache, type Cache } from '../cache';
import { errors } from '../errors';
import type { Admission, CheckOutcome, FailureCount, FailureKeys, FailurePolicy, PolicyState } from './failure-policy';
import { MemoryFailureStore, SWEEP_AT, type FailureStore, type StoreKey, type Stored } from './failure-store';
import { RedisFailureStore } from './redis-failure-store';

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
