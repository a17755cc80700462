import { errors } from '../errors';
import type { Cache } from './cache';

interface Entry {
  value: string;
  expiresAt: number;
}

export interface MemoryCacheLimits {
  /** Live keys at most (default 200,000). */
  maxEntries?: number;
  /** Characters of keys and values at most (default 64 Mi, about 128 MiB of strings). */
  maxChars?: number;
}

export const MEMORY_CACHE_MAX_ENTRIES = 200_000;
export const MEMORY_CACHE_MAX_CHARS = 64 * 1024 * 1024;

const size = (key: string, value: string) => key.length + value.length;

/**
 * In-process cache with the same semantics as the Redis one (TTL, atomic take-once), bounded in keys
 * and characters. It holds what must not vanish silently (codes, interactions, ceremonies, revocations,
 * counters), so a full cache never evicts a live entry: it drops the expired ones, and if that is not
 * enough it refuses the write with 503 service_unavailable (Retry-After), as Redis at maxmemory with
 * noeviction does. Entries expire on their own TTLs (15 minutes at most for what a stranger can create,
 * and that is also limited per address), so the refusal ends by itself.
 */
export class MemoryCache implements Cache {
  readonly mode = 'memory' as const;
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly maxEntries: number;
  private readonly maxChars: number;
  private chars = 0;

  constructor(
    private readonly prefix = '',
    limits: MemoryCacheLimits = {},
  ) {
    this.maxEntries = limits.maxEntries ?? MEMORY_CACHE_MAX_ENTRIES;
    this.maxChars = limits.maxChars ?? MEMORY_CACHE_MAX_CHARS;
    this.sweeper = setInterval(() => this.sweep(), 30000);
    this.sweeper.unref();
  }

  /** Live keys held now. */
  get size(): number {
    return this.entries.size;
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(this.prefix + key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.remove(this.prefix + key, entry);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.remove(key, entry);
  }

  private remove(fullKey: string, entry: Entry): void {
    this.entries.delete(fullKey);
    this.chars -= size(fullKey, entry.value);
  }

  /** Whether writing `value` under `fullKey` stays within both bounds. */
  private fits(fullKey: string, value: string): boolean {
    const previous = this.entries.get(fullKey);
    if (!previous && this.entries.size >= this.maxEntries) return false;
    const growth = size(fullKey, value) - (previous ? size(fullKey, previous.value) : 0);
    return growth <= 0 || this.chars + growth <= this.maxChars;
  }

  /** Stores, or refuses (503) when the write would pass a bound even after the expired entries are gone. */
  private put(fullKey: string, entry: Entry): void {
    if (!this.fits(fullKey, entry.value)) {
      this.sweep();
      if (!this.fits(fullKey, entry.value))
        throw errors.unavailable('cache', new Error('the in-process cache is full'));
    }
    const previous = this.entries.get(fullKey);
    if (previous) this.chars -= size(fullKey, previous.value);
    this.entries.set(fullKey, entry);
    this.chars += size(fullKey, entry.value);
  }

  async get(key: string) {
    return this.live(key)?.value ?? null;
  }

  async set(key: string, value: string, ttlMs?: number) {
    this.put(this.prefix + key, { value, expiresAt: ttlMs === undefined ? Infinity : Date.now() + ttlMs });
  }

  async setIfAbsent(key: string, value: string, ttlMs: number) {
    if (this.live(key)) return false;
    await this.set(key, value, ttlMs);
    return true;
  }

  async del(...keys: string[]) {
    for (const key of keys) {
      const entry = this.entries.get(this.prefix + key);
      if (entry) this.remove(this.prefix + key, entry);
    }
  }

  async take(key: string) {
    const entry = this.live(key);
    if (!entry) return null;
    this.remove(this.prefix + key, entry);
    return entry.value;
  }

  async incr(key: string, ttlMs: number) {
    const entry = this.live(key);
    const next = (entry ? Number(entry.value) : 0) + 1;
    this.put(this.prefix + key, {
      value: String(next),
      expiresAt: entry ? entry.expiresAt : Date.now() + ttlMs,
    });
    return next;
  }

  async ping() {}

  async close() {
    clearInterval(this.sweeper);
    this.entries.clear();
    this.chars = 0;
  }
}
