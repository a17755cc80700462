import type { Logger } from '../logger';
import type { Cache } from './cache';

export interface InvalidateOptions {
  /** The longest TTL the keys may have been cached with: retrying stops then, the entries having expired. */
  entryTtlMs?: number;
  /** Pause between retries of a failed invalidation. */
  retryMs?: number;
}

export const INVALIDATION_RETRY_MS = 1000;

interface Pending {
  seq: number;
  giveUpAt: number;
}

/** Keys a cache failed to delete, retried until the cache takes them or their entries have expired. */
class PendingInvalidations {
  private readonly keys = new Map<string, Pending>();
  private seq = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly cache: Cache,
    private readonly logger: Logger,
    private readonly retryMs: number,
  ) {}

  get size(): number {
    return this.keys.size;
  }

  add(keys: string[], entryTtlMs: number): void {
    const giveUpAt = Date.now() + entryTtlMs;
    for (const key of keys) {
      const later = Math.max(giveUpAt, this.keys.get(key)?.giveUpAt ?? 0);
      this.keys.set(key, { seq: ++this.seq, giveUpAt: later });
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.keys.size === 0) return;
    this.timer = setTimeout(() => void this.retry(), this.retryMs);
    this.timer.unref();
  }

  private async retry(): Promise<void> {
    const now = Date.now();
    for (const [key, p] of this.keys) if (p.giveUpAt <= now) this.keys.delete(key);
    const attempt = [...this.keys].map(([key, p]) => ({ key, seq: p.seq }));
    try {
      if (attempt.length) await this.cache.del(...attempt.map((a) => a.key));
      // a key failed again while this attempt ran keeps its newer entry, to be retried after that failure
      for (const { key, seq } of attempt) if (this.keys.get(key)?.seq === seq) this.keys.delete(key);
      if (attempt.length) this.logger.info('cache invalidation retried', { keys: attempt.length });
    } catch {
      // still unreachable: try again after the pause
    } finally {
      this.timer = undefined;
      this.schedule();
    }
  }
}

const pendingByCache = new WeakMap<Cache, PendingInvalidations>();

function pendingFor(cache: Cache, logger: Logger, retryMs: number): PendingInvalidations {
  let pending = pendingByCache.get(cache);
  if (!pending) pendingByCache.set(cache, (pending = new PendingInvalidations(cache, logger, retryMs)));
  return pending;
}

/**
 * After a write has committed, deletes the cache entries it made stale. The write succeeded whatever
 * the cache says: a failed delete is logged and retried in the background every `retryMs` until the cache
 * takes it (or, given `entryTtlMs`, until the entries have expired), so a stale entry outlives a cache
 * outage by at most one retry pause, and never its TTL. Never throws.
 */
export async function invalidateAfterCommit(
  cache: Cache,
  keys: string[],
  logger: Logger,
  options: InvalidateOptions = {},
): Promise<void> {
  if (keys.length === 0) return;
  try {
    await cache.del(...keys);
  } catch (err) {
    logger.warn('cache invalidation failed after a committed write; retrying until the cache answers', {
      keys: keys.length,
      key_kinds: [...new Set(keys.map((k) => k.split(':')[0]))],
      error: (err as Error).message,
    });
    pendingFor(cache, logger, options.retryMs ?? INVALIDATION_RETRY_MS).add(keys, options.entryTtlMs ?? Infinity);
  }
}

/** How many keys of this cache still wait for a retried invalidation (for tests and diagnostics). */
export function pendingInvalidations(cache: Cache): number {
  return pendingByCache.get(cache)?.size ?? 0;
}
