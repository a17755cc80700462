import type { InvalidationBus } from './invalidation-bus';

export interface LocalCacheOptions {
  /** Bus topic; every replica's cache of the same name drops a key when one publishes it. */
  name: string;
  /** Backstop for a missed message. */
  ttlMs: number;
  /** Oldest entries are dropped beyond this many. */
  max: number;
  /** While the bus is down, entries older than this are reloaded (default 1 s). */
  untrustedAfterMs?: number;
}

interface Entry<V> {
  value: V | null;
  loadedAt: number;
}

const MESSAGE_ALL = '*';

/**
 * Read-mostly rows in process memory, in front of the database. A miss loads once however many
 * requests wait for it (absent rows are cached too); invalidate() drops the key here at once and on
 * every replica through the bus. A load that overlaps an invalidation is not stored.
 */
export class LocalCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly loading = new Map<string, Promise<V | null>>();
  private readonly untrustedAfterMs: number;

  constructor(
    private readonly bus: InvalidationBus,
    private readonly options: LocalCacheOptions,
  ) {
    this.untrustedAfterMs = options.untrustedAfterMs ?? 1000;
    bus.subscribe(`cache:${options.name}`, (key) => (key === MESSAGE_ALL ? this.clear() : this.drop(key)));
    bus.onResync(() => this.clear());
  }

  /** The cached value, or null when absent or stale; never loads. */
  peek(key: string): V | null | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const age = Date.now() - entry.loadedAt;
    if (age > this.options.ttlMs || (age > this.untrustedAfterMs && !this.bus.connected)) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  get(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const cached = this.peek(key);
    if (cached !== undefined) return Promise.resolve(cached);
    const pending = this.loading.get(key);
    if (pending) return pending;
    const loadedAt = Date.now();
    const promise = load().then(
      (value) => {
        if (this.loading.get(key) === promise) {
          this.loading.delete(key);
          this.store(key, { value, loadedAt });
        }
        return value;
      },
      (err: unknown) => {
        if (this.loading.get(key) === promise) this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, promise);
    return promise;
  }

  /**
   * Stores a value this process knows to be current (it has just written it), here only; a load in
   * flight for the key is not stored over it. Other replicas still learn of changes by invalidate().
   */
  set(key: string, value: V | null): void {
    this.loading.delete(key);
    this.store(key, { value, loadedAt: Date.now() });
  }

  /** After a committed write: drop the key here and on every replica. Never throws. */
  async invalidate(key: string): Promise<void> {
    this.drop(key);
    await this.bus.publish(`cache:${this.options.name}`, key);
  }

  /** Drops every entry here and on every replica. */
  async invalidateAll(): Promise<void> {
    this.clear();
    await this.bus.publish(`cache:${this.options.name}`, MESSAGE_ALL);
  }

  get size(): number {
    return this.entries.size;
  }

  private store(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.options.max) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  private drop(key: string): void {
    this.entries.delete(key);
    this.loading.delete(key);
  }

  private clear(): void {
    this.entries.clear();
    this.loading.clear();
  }
}
