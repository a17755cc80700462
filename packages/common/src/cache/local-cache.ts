import type { InvalidationBus } from './invalidation-bus';

export interface LocalCacheOptions<V = unknown> {
  /** Bus topic; every replica's cache of the same name drops a key when one publishes it. */
  name: string;
  /** Backstop for a missed message. */
  ttlMs: number;
  /** Oldest entries are dropped beyond this many. */
  max: number;
  /** Oldest entries are dropped beyond this many characters of values, as `sizeOf` counts (default 16 Mi). */
  maxChars?: number;
  /** A value's size in characters (default: its JSON length), counted once when it is stored. */
  sizeOf?: (value: V) => number;
  /** While the bus is down, entries older than this are reloaded (default 1 s). */
  untrustedAfterMs?: number;
}

interface Entry<V> {
  value: V | null;
  loadedAt: number;
  chars: number;
}

export const LOCAL_CACHE_MAX_CHARS = 16 * 1024 * 1024;

/** JSON length of a row (bigints as strings; a value JSON cannot write counts as 1 KiB). */
function jsonSize(value: unknown): number {
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))?.length ?? 4;
  } catch {
    return 1024;
  }
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
  private readonly maxChars: number;
  private readonly sizeOf: (value: V) => number;
  private chars = 0;

  constructor(
    private readonly bus: InvalidationBus,
    private readonly options: LocalCacheOptions<V>,
  ) {
    this.untrustedAfterMs = options.untrustedAfterMs ?? 1000;
    this.maxChars = options.maxChars ?? LOCAL_CACHE_MAX_CHARS;
    this.sizeOf = options.sizeOf ?? jsonSize;
    bus.subscribe(`cache:${options.name}`, (key) => (key === MESSAGE_ALL ? this.clear() : this.drop(key)));
    bus.onResync(() => this.clear());
  }

  /** The cached value, or null when absent or stale; never loads. */
  peek(key: string): V | null | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const age = Date.now() - entry.loadedAt;
    if (age > this.options.ttlMs || (age > this.untrustedAfterMs && !this.bus.connected)) {
      this.delete(key);
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
          this.store(key, value, loadedAt);
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
    this.store(key, value, Date.now());
  }

  /** Drops the key here only, and any load of it in flight: this process reads it again when next asked. */
  forget(key: string): void {
    this.drop(key);
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

  /** Characters held, as `sizeOf` counted them. */
  get heldChars(): number {
    return this.chars;
  }

  /**
   * Keeps the entry, then drops the oldest-stored ones beyond `max` entries or `maxChars` characters.
   * Dropping is always safe here: every entry is a copy of a database row, loaded again when next asked.
   */
  private store(key: string, value: V | null, loadedAt: number): void {
    this.delete(key);
    const chars = key.length + (value === null ? 4 : this.sizeOf(value));
    this.entries.set(key, { value, loadedAt, chars });
    this.chars += chars;
    while (this.entries.size > this.options.max || (this.chars > this.maxChars && this.entries.size > 1)) {
      this.delete(this.entries.keys().next().value as string);
    }
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.chars -= entry.chars;
  }

  private drop(key: string): void {
    this.delete(key);
    this.loading.delete(key);
  }

  private clear(): void {
    this.entries.clear();
    this.chars = 0;
    this.loading.clear();
  }
}
