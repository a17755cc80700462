import { MemoryCache, RedisCache, type Cache } from '../src/cache';
import { testLogger } from './support';

const backends: [string, () => Cache][] = [['memory', () => new MemoryCache(`t${Math.random()}:`)]];
const redisUrl = process.env.TEST_REDIS_URL;
if (redisUrl) backends.push(['redis', () => new RedisCache(redisUrl, `test:cache:${Math.random()}:`, testLogger)]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(backends)('cache contract (%s)', (_name, make) => {
  let cache: Cache;
  beforeEach(() => {
    cache = make();
  });
  afterEach(() => cache.close());

  it('stores and reads a value, and deletes it', async () => {
    await cache.set('a', '1');
    expect(await cache.get('a')).toBe('1');
    await cache.del('a');
    expect(await cache.get('a')).toBeNull();
  });

  it('expires a value after its TTL', async () => {
    // a TTL far above a stall of the loaded machine between the set and the first get
    await cache.set('short', 'x', 1000);
    expect(await cache.get('short')).toBe('x');
    await sleep(1300);
    expect(await cache.get('short')).toBeNull();
  });

  it('take returns the value once, to exactly one of many concurrent callers', async () => {
    await cache.set('code', 'payload', 10000);
    const results = await Promise.all(Array.from({ length: 20 }, () => cache.take('code')));
    expect(results.filter((r) => r === 'payload')).toHaveLength(1);
    expect(results.filter((r) => r === null)).toHaveLength(19);
    expect(await cache.get('code')).toBeNull();
  });

  it('setIfAbsent sets only the first time, until expiry', async () => {
    expect(await cache.setIfAbsent('lock', 'a', 1000)).toBe(true);
    expect(await cache.setIfAbsent('lock', 'b', 1000)).toBe(false);
    expect(await cache.get('lock')).toBe('a');
    await sleep(1300);
    expect(await cache.setIfAbsent('lock', 'c', 1000)).toBe(true);
  });

  it('incr counts atomically and its TTL starts at the first increment', async () => {
    const values = await Promise.all(Array.from({ length: 10 }, () => cache.incr('n', 1000)));
    expect([...values].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    await sleep(1300);
    expect(await cache.incr('n', 1000)).toBe(1);
  });

  it('keeps namespaces apart', async () => {
    const other = make();
    await cache.set('shared', 'mine');
    expect(await other.get('shared')).toBeNull();
    await other.close();
  });
});
