/** Past this many keys, a map of counts drops the ones whose window has ended before adding one. */
export const SWEEP_AT = 10000;

/** A policy's key in the store, with its limit and window. */
export interface StoreKey {
  key: string;
  limit: number;
  windowMs: number;
  /** Refuses only when the key at this index (of the same operation; -1: none, never) has a count above zero. */
  onlyAfter?: number;
}

/** A count in the store and the milliseconds left in its window. */
export interface Stored {
  count: number;
  ttlMs: number;
}

/** The shared counts: every operation on several keys is atomic. */
export interface FailureStore {
  /** Adds one to every key if each is below its limit; else changes nothing and names the first at its limit. */
  reserve(keys: StoreKey[]): Promise<{ counts: Stored[] } | { full: number; stored: Stored }>;
  /** Adds one to every key. */
  add(keys: StoreKey[]): Promise<Stored[]>;
  /** Takes one off each key in `release` (never below zero) and deletes each key in `remove`. */
  settle(release: string[], remove: string[]): Promise<void>;
}

/** Counts in this process (embedded mode): every operation is synchronous, hence atomic. */
export class MemoryFailureStore implements FailureStore {
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
