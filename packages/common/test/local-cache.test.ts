import { MemoryBus, LocalCache, RedisBus, type InvalidationBus } from '../src/cache';
import { testLogger } from './support';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function counter(values: Record<string, string | null>) {
  const calls: string[] = [];
  const load = (key: string) => async () => {
    calls.push(key);
    return values[key] ?? null;
  };
  return { calls, load };
}

describe('LocalCache', () => {
  let bus: InvalidationBus;
  beforeEach(() => {
    bus = new MemoryBus();
  });

  it('loads a key once for many concurrent readers, then serves it from memory', async () => {
    const cache = new LocalCache<string>(bus, { name: 'apps', ttlMs: 60000, max: 10 });
    const { calls, load } = counter({ a: 'A' });
    const values = await Promise.all(Array.from({ length: 5 }, () => cache.get('a', load('a'))));
    expect(values).toEqual(['A', 'A', 'A', 'A', 'A']);
    expect(await cache.get('a', load('a'))).toBe('A');
    expect(calls).toEqual(['a']);
  });

  it('caches absent rows too, until invalidated', async () => {
    const cache = new LocalCache<string>(bus, { name: 'apps', ttlMs: 60000, max: 10 });
    const values: Record<string, string | null> = { a: null };
    const { calls, load } = counter(values);
    expect(await cache.get('a', load('a'))).toBeNull();
    expect(await cache.get('a', load('a'))).toBeNull();
    expect(calls).toHaveLength(1);
    values.a = 'created';
    await cache.invalidate('a');
    expect(await cache.get('a', load('a'))).toBe('created');
  });

  it('does not store a load that overlapped an invalidation', async () => {
    const cache = new LocalCache<string>(bus, { name: 'apps', ttlMs: 60000, max: 10 });
    let release!: (v: string) => void;
    const slow = cache.get('a', () => new Promise<string>((r) => (release = r)));
    await cache.invalidate('a');
    release('stale');
    expect(await slow).toBe('stale');
    expect(await cache.get('a', async () => 'fresh')).toBe('fresh');
  });

  it('set() stores a just-written value over an absence; a load in flight does not overwrite it', async () => {
    const cache = new LocalCache<string>(bus, { name: 'subjects', ttlMs: 60000, max: 10 });
    expect(await cache.get('s', async () => null)).toBeNull();
    cache.set('s', 'usr_1');
    expect(await cache.get('s', async () => 'loaded')).toBe('usr_1');
    let release!: (v: string) => void;
    const slow = cache.get('t', () => new Promise<string>((r) => (release = r)));
    cache.set('t', 'written');
    release('stale');
    expect(await slow).toBe('stale');
    expect(cache.peek('t')).toBe('written');
  });

  it('expires entries after the TTL backstop and keeps at most max entries', async () => {
    // the cache's clock, moved by hand: a loaded machine cannot stretch the 30 ms between two lines
    let now = 1_000_000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      const cache = new LocalCache<string>(bus, { name: 'apps', ttlMs: 30, max: 2 });
      await cache.get('a', async () => 'A');
      now += 30;
      expect(cache.peek('a')).toBe('A');
      now += 1;
      expect(cache.peek('a')).toBeUndefined();
      await cache.get('a', async () => 'A');
      await cache.get('b', async () => 'B');
      await cache.get('c', async () => 'C');
      expect(cache.size).toBe(2);
      expect(cache.peek('a')).toBeUndefined();
      expect(cache.peek('b')).toBe('B');
      expect(cache.peek('c')).toBe('C');
    } finally {
      clock.mockRestore();
    }
  });

  it('a failed load is not cached', async () => {
    const cache = new LocalCache<string>(bus, { name: 'apps', ttlMs: 60000, max: 10 });
    await expect(cache.get('a', async () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    expect(await cache.get('a', async () => 'A')).toBe('A');
  });

  it('an invalidation reaches every cache of the same name on the bus, and no other', async () => {
    const one = new LocalCache<string>(bus, { name: 'apps', ttlMs: 60000, max: 10 });
    const two = new LocalCache<string>(bus, { name: 'apps', ttlMs: 60000, max: 10 });
    const users = new LocalCache<string>(bus, { name: 'users', ttlMs: 60000, max: 10 });
    await Promise.all([one.get('a', async () => '1'), two.get('a', async () => '2'), users.get('a', async () => 'u')]);
    await one.invalidate('a');
    expect(two.peek('a')).toBeUndefined();
    expect(users.peek('a')).toBe('u');
    await users.invalidateAll();
    expect(users.peek('a')).toBeUndefined();
  });
});

const redisUrl = process.env.TEST_REDIS_URL;
(redisUrl ? describe : describe.skip)('LocalCache across replicas (Redis pub/sub)', () => {
  const prefix = `test:bus:${Math.random()}:`;
  let a: RedisBus;
  let b: RedisBus;
  beforeAll(async () => {
    a = new RedisBus(redisUrl!, prefix, testLogger);
    b = new RedisBus(redisUrl!, prefix, testLogger);
    for (let i = 0; i < 50 && !(a.connected && b.connected); i++) await sleep(20);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('an invalidation on one replica drops the key on the other within a second', async () => {
    const onA = new LocalCache<string>(a, { name: 'keys', ttlMs: 60000, max: 10 });
    const onB = new LocalCache<string>(b, { name: 'keys', ttlMs: 60000, max: 10 });
    await sleep(500); // subscriptions settle
    await onA.get('k', async () => 'v');
    await onB.get('k', async () => 'v');
    await onA.invalidate('k');
    expect(onA.peek('k')).toBeUndefined();
    for (let i = 0; i < 50 && onB.peek('k') !== undefined; i++) await sleep(20);
    expect(onB.peek('k')).toBeUndefined();
  });

  it('delivers messages of other topics to their subscribers with the text intact', async () => {
    const seen: string[] = [];
    b.subscribe('revoked', (m) => seen.push(m));
    await sleep(500); // the subscription settles
    await a.publish('revoked', 'jti_1|1700000000');
    for (let i = 0; i < 50 && seen.length === 0; i++) await sleep(20);
    expect(seen).toEqual(['jti_1|1700000000']);
  });
});
