import type { Logger } from '../logger';
import type { Cache } from './cache';
import { MemoryCache } from './memory-cache';
import { RedisCache } from './redis-cache';

export type { Cache } from './cache';
export { MemoryCache, MEMORY_CACHE_MAX_CHARS, MEMORY_CACHE_MAX_ENTRIES, type MemoryCacheLimits } from './memory-cache';
export { RedisCache } from './redis-cache';
export { createBus, MemoryBus, RedisBus, type BusHandler, type InvalidationBus } from './invalidation-bus';
export { LocalCache, LOCAL_CACHE_MAX_CHARS, type LocalCacheOptions } from './local-cache';

export function createCache(url: string | undefined, prefix: string, logger: Logger): Cache {
  return url ? new RedisCache(url, prefix, logger) : new MemoryCache(prefix);
}
export {
  invalidateAfterCommit,
  pendingInvalidations,
  INVALIDATION_RETRY_MS,
  type InvalidateOptions,
} from './invalidate';
