/** Short-lived shared state: codes, sessions, revocations, rate limits, hot caches. */
export interface Cache {
  readonly mode: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  /** ttlMs omitted: no expiry. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets only when absent; true when this call set it. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  del(...keys: string[]): Promise<void>;
  /** Atomically reads and deletes: of many concurrent callers, exactly one gets the value. */
  take(key: string): Promise<string | null>;
  /** Atomic increment; the TTL starts with the first increment of a key. */
  incr(key: string, ttlMs: number): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
