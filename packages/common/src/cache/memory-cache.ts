import type { Cache } from './cache';

interface Entry {
  value: string;
  expiresAt: number;
}

/** In-process cache with the same semantics as the Redis one (TTL, atomic take-once). */
export class MemoryCache implements Cache {
  readonly mode = 'memory' as const;
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly prefix = '') {
    this.sweeper = setInterval(() => this.sweep(), 30000);
    this.sweeper.unref();
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(this.prefix + key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(this.prefix + key);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }

  async get(key: string) {
    return this.live(key)?.value ?? null;
  }

  async set(key: string, value: string, ttlMs?: number) {
    this.entries.set(this.prefix + key, { value, expiresAt: ttlMs === undefined ? Infinity : Date.now() + ttlMs });
  }

  async setIfAbsent(key: string, value: string, ttlMs: number) {
    if (this.live(key)) return false;
    await this.set(key, value, ttlMs);
    return true;
  }

  async del(...keys: string[]) {
    for (const key of keys) this.entries.delete(this.prefix + key);
  }

  async take(key: string) {
    const entry = this.live(key);
    if (!entry) return null;
    this.entries.delete(this.prefix + key);
    return entry.value;
  }

  async incr(key: string, ttlMs: number) {
    const entry = this.live(key);
    const next = (entry ? Number(entry.value) : 0) + 1;
    this.entries.set(this.prefix + key, {
      value: String(next),
      expiresAt: entry ? entry.expiresAt : Date.now() + ttlMs,
    });
    return next;
  }

  async ping() {}

  async close() {
    clearInterval(this.sweeper);
    this.entries.clear();
  }
}
