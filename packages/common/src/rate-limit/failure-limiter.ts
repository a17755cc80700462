import {
  RateLimiterMemory,
  RateLimiterRedis,
  type RateLimiterAbstract,
  type RateLimiterRes,
} from 'rate-limiter-flexible';
import { RedisCache, type Cache } from '../cache';
import { errors } from '../errors';

/** At most `limit` failures per key in a fixed window of `windowSeconds`. */
export interface FailurePolicy {
  /** Names the policy in the RateLimit fields and in storage keys. */
  name: string;
  limit: number;
  windowSeconds: number;
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

interface Counter {
  policy: FailurePolicy;
  limiter: RateLimiterAbstract;
  /** Keys known here to be at their limit, with the time their window ends. */
  blockedUntil: Map<string, number>;
}

/**
 * Counts failed attempts (wrong secrets, unknown keys, bad passwords) under several policies, in Redis
 * when the service has Redis (so replicas share the counts), in process memory otherwise.
 *
 * Only failures touch the store. A key that reached its limit is remembered in this process until its
 * window ends, so `blocked()` answers from memory and a successful request costs no round trip.
 */
export class FailureLimiter {
  private readonly counters: Counter[];
  /** Resolves once the store can take commands (a bounded wait while Redis reconnects). */
  private readonly storeReady: () => Promise<void>;

  constructor(cache: Cache, scope: string, policies: FailurePolicy[]) {
    this.counters = policies.map((policy) => ({
      policy,
      limiter: counterFor(cache, scope, policy),
      blockedUntil: new Map(),
    }));
    this.storeReady = cache instanceof RedisCache ? () => cache.whenReady() : () => Promise.resolve();
  }

  /** Runs store commands; any store failure becomes 503 service_unavailable. */
  private async inStore<T>(commands: () => Promise<T>): Promise<T> {
    try {
      await this.storeReady();
      return await commands();
    } catch (err) {
      throw errors.unavailable('cache', err);
    }
  }

  /** From process memory only: the first applicable policy whose key is at its limit, or null. */
  blocked(keys: FailureKeys, now = Date.now()): PolicyState | null {
    for (const { policy, blockedUntil } of this.counters) {
      const key = keys[policy.name];
      const until = key === undefined ? undefined : blockedUntil.get(key);
      if (until === undefined) continue;
      if (until > now) return { policy, remaining: 0, resetMs: until - now };
      blockedUntil.delete(key!);
    }
    return null;
  }

  /**
   * Like blocked(), and when this process knows no block, asks the store, so a limit reached through
   * other replicas counts at once. One round trip: for checks that cost more anyway (password hashing).
   */
  async blockedAnywhere(keys: FailureKeys): Promise<PolicyState | null> {
    const local = this.blocked(keys);
    if (local) return local;
    const applicable = this.counters.filter((c) => keys[c.policy.name] !== undefined);
    const results = await this.inStore(() => Promise.all(applicable.map((c) => c.limiter.get(keys[c.policy.name]!))));
    const now = Date.now();
    for (const [i, counter] of applicable.entries()) {
      const res = results[i];
      if (res && res.consumedPoints >= counter.policy.limit)
        return this.note(counter, keys[counter.policy.name]!, res, now);
    }
    return null;
  }

  /** Counts one failure under every applicable policy. A store failure becomes 503 service_unavailable. */
  async recordFailure(keys: FailureKeys): Promise<FailureCount> {
    const applicable = this.counters.filter((c) => keys[c.policy.name] !== undefined);
    const results = await this.inStore(() =>
      Promise.all(applicable.map((c) => c.limiter.penalty(keys[c.policy.name]!))),
    );
    const now = Date.now();
    const states = applicable.map((counter, i) => this.note(counter, keys[counter.policy.name]!, results[i], now));
    const exceeded = states.find((s, i) => results[i].consumedPoints > s.policy.limit) ?? null;
    return { states, exceeded };
  }

  /** Forgets the failures of one key under one policy (e.g. a user's, after a successful sign-in). */
  async forget(policyName: string, key: string): Promise<void> {
    const counter = this.counters.find((c) => c.policy.name === policyName);
    if (!counter) return;
    counter.blockedUntil.delete(key);
    await this.inStore(() => counter.limiter.delete(key));
  }

  private note(counter: Counter, key: string, res: RateLimiterRes, now: number): PolicyState {
    const { policy } = counter;
    const resetMs = Math.max(res.msBeforeNext, 0);
    if (res.consumedPoints >= policy.limit) {
      counter.blockedUntil.set(key, now + resetMs);
      if (counter.blockedUntil.size > 10000) sweep(counter.blockedUntil, now);
    }
    return { policy, remaining: Math.max(policy.limit - res.consumedPoints, 0), resetMs };
  }
}

function sweep(blockedUntil: Map<string, number>, now: number): void {
  for (const [key, until] of blockedUntil) if (until <= now) blockedUntil.delete(key);
}

function counterFor(cache: Cache, scope: string, policy: FailurePolicy): RateLimiterAbstract {
  const options = {
    keyPrefix: `failures:${scope}:${policy.name}`,
    points: policy.limit,
    duration: policy.windowSeconds,
  };
  if (cache.mode === 'memory') return new RateLimiterMemory(options);
  if (!(cache instanceof RedisCache)) throw new Error('failure limits need the Redis client of a RedisCache');
  return new RateLimiterRedis({ ...options, storeClient: cache.redis });
}
