import { Writable } from 'node:stream';
import winston from 'winston';
import { createLogger, errors, invalidateAfterCommit, MemoryCache, pendingInvalidations } from '../src';

/** An in-process cache whose deletes fail while `down`, like Redis during an outage. */
class FlakyCache extends MemoryCache {
  down = false;
  deletes: string[][] = [];
  override async del(...keys: string[]) {
    this.deletes.push(keys);
    if (this.down) throw errors.unavailable('cache');
    await super.del(...keys);
  }
}

function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('test', 'info');
  logger.clear();
  logger.add(
    new winston.transports.Stream({
      stream: new Writable({ write: (c, _e, done) => (lines.push(JSON.parse(String(c))), done()) }),
    }),
  );
  return { logger, lines };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 5));
}

describe('invalidateAfterCommit', () => {
  it('deletes the entries at once when the cache answers', async () => {
    const cache = new FlakyCache();
    const { logger, lines } = capturedLogger();
    await cache.set('tx:1', 'pending');
    await invalidateAfterCommit(cache, ['tx:1'], logger);
    expect(await cache.get('tx:1')).toBeNull();
    expect(pendingInvalidations(cache)).toBe(0);
    expect(lines).toEqual([]);
  });

  it('never fails the write: logs without key values, retries until the stale entry is gone', async () => {
    const cache = new FlakyCache();
    const { logger, lines } = capturedLogger();
    await cache.set('apikey:key_1:hash', 'app_1');
    cache.down = true;
    await expect(invalidateAfterCommit(cache, ['apikey:key_1:hash'], logger, { retryMs: 10 })).resolves.toBeUndefined();
    expect(pendingInvalidations(cache)).toBe(1);
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', keys: 1, key_kinds: ['apikey'] })]);
    expect(JSON.stringify(lines)).not.toContain('key_1');
    await until(() => cache.deletes.length >= 3);
    expect(await cache.get('apikey:key_1:hash')).toBe('app_1');
    cache.down = false;
    await until(() => pendingInvalidations(cache) === 0);
    expect(await cache.get('apikey:key_1:hash')).toBeNull();
    expect(lines.at(-1)).toEqual(
      expect.objectContaining({ level: 'info', message: 'cache invalidation retried', keys: 1 }),
    );
  });

  it('stops retrying once the entries have expired by their TTL', async () => {
    const cache = new FlakyCache();
    const { logger } = capturedLogger();
    cache.down = true;
    await invalidateAfterCommit(cache, ['price:WLD:USD'], logger, { retryMs: 5, entryTtlMs: 30 });
    expect(pendingInvalidations(cache)).toBe(1);
    await until(() => pendingInvalidations(cache) === 0);
    const attempts = cache.deletes.length;
    await new Promise((r) => setTimeout(r, 30));
    expect(cache.deletes.length).toBe(attempts);
  });
});
