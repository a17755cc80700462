import { AppError } from '../src/errors';
import { LocalCache, MemoryBus, MemoryCache } from '../src/cache';

describe('MemoryCache bounds (issue 23, item 5)', () => {
  it('refuses a new key past maxEntries with 503, never evicting a live entry', async () => {
    const cache = new MemoryCache('t:', { maxEntries: 3 });
    for (const k of ['a', 'b', 'c']) await cache.set(k, 'v', 60000);
    const refused = await cache.set('d', 'v', 60000).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ status: 503, code: 'service_unavailable', headers: { 'Retry-After': '5' } });
    // what was there is all still there: a code, an interaction or a counter is never dropped to make room
    expect(await Promise.all(['a', 'b', 'c'].map((k) => cache.get(k)))).toEqual(['v', 'v', 'v']);
    expect(await cache.get('d')).toBeNull();
    // a key already held can still be written, counted and taken
    await cache.set('a', 'w', 60000);
    await expect(cache.incr('counter', 60000)).rejects.toMatchObject({ status: 503 });
    expect(await cache.take('c')).toBe('v');
    await cache.set('d', 'v', 60000);
    expect(cache.size).toBe(3);
    await cache.close();
  });

  it('makes room by dropping expired entries only', async () => {
    const cache = new MemoryCache('t:', { maxEntries: 2 });
    await cache.set('old', 'v', 1);
    await cache.set('live', 'v', 60000);
    await new Promise((r) => setTimeout(r, 5));
    await cache.set('new', 'v', 60000);
    expect(await cache.get('live')).toBe('v');
    expect(await cache.get('new')).toBe('v');
    await cache.close();
  });

  it('bounds the characters of keys and values too', async () => {
    const cache = new MemoryCache('', { maxChars: 1000 });
    await cache.set('a', 'x'.repeat(600), 60000);
    await expect(cache.set('b', 'x'.repeat(600), 60000)).rejects.toMatchObject({ status: 503 });
    await cache.set('a', 'x'.repeat(900), 60000);
    await cache.del('a');
    await cache.set('b', 'x'.repeat(900), 60000);
    expect(await cache.get('b')).toHaveLength(900);
    await cache.close();
  });
});

describe('LocalCache bounds in characters (issue 23, item 5)', () => {
  it('drops the oldest-stored rows past maxChars; a dropped row is loaded again when asked', async () => {
    const cache = new LocalCache<string>(new MemoryBus(), { name: 'rows', ttlMs: 60000, max: 100, maxChars: 100 });
    let loads = 0;
    const load = (v: string) => async () => {
      loads++;
      return v;
    };
    await cache.get('a', load('x'.repeat(40)));
    await cache.get('b', load('y'.repeat(40)));
    expect(cache.size).toBe(2);
    await cache.get('c', load('z'.repeat(40)));
    expect(cache.size).toBe(2);
    expect(cache.heldChars).toBeLessThanOrEqual(100);
    expect(cache.peek('a')).toBeUndefined();
    expect(await cache.get('a', load('x'.repeat(40)))).toBe('x'.repeat(40));
    expect(loads).toBe(4);
    // a row larger than the bound is still served (the bound keeps at least the newest row)
    await cache.get('huge', load('h'.repeat(500)));
    expect(cache.peek('huge')).toBe('h'.repeat(500));
    expect(cache.size).toBe(1);
  });
});
