import express from 'express';
import request from 'supertest';
import { trustProxySetting } from '../src/config';
import { MemoryCache, RedisCache, type Cache } from '../src/cache';
import { AppError } from '../src/errors';
import {
  clientAddress,
  FailureLimiter,
  failureFields,
  rateLimitPolicyField,
  tooManyFailures,
  type Admission,
} from '../src/rate-limit';
import { testLogger } from './support';
import { freePort } from './support/throwaway';

const policies = [
  { name: 'per-id', limit: 3, windowSeconds: 60 },
  { name: 'per-address', limit: 5, windowSeconds: 120 },
];

const backends: [string, () => Cache][] = [['memory', () => new MemoryCache()]];
const redisUrl = process.env.TEST_REDIS_URL;
if (redisUrl) backends.push(['redis', () => new RedisCache(redisUrl, `test:limits:${Math.random()}:`, testLogger)]);

describe.each(backends)('FailureLimiter (%s)', (_name, make) => {
  let cache: Cache;
  let limiter: FailureLimiter;
  beforeEach(() => {
    cache = make();
    limiter = new FailureLimiter(cache, 'unit', policies);
  });
  afterEach(() => cache.close());

  it('counts failures per policy and blocks a key in memory once it reaches its limit', async () => {
    const keys = { 'per-id': 'app_1', 'per-address': '192.0.2.1' };
    const first = await limiter.recordFailure(keys);
    expect(first.exceeded).toBeNull();
    expect(first.states.map((s) => [s.policy.name, s.remaining])).toEqual([
      ['per-id', 2],
      ['per-address', 4],
    ]);
    expect(failureFields(first)).toEqual({
      'RateLimit-Policy': '"per-id";q=3;w=60, "per-address";q=5;w=120',
      RateLimit: expect.stringMatching(/^"per-id";r=2;t=(59|60), "per-address";r=4;t=(119|120)$/),
    });
    expect(limiter.blocked(keys)).toBeNull();
    await limiter.recordFailure(keys);
    const third = await limiter.recordFailure(keys);
    expect(third.exceeded).toBeNull();
    expect(limiter.blocked(keys)).toMatchObject({ policy: { name: 'per-id' }, remaining: 0 });
    expect(limiter.blocked({ 'per-id': 'app_2', 'per-address': '192.0.2.1' })).toBeNull();
    const fourth = await limiter.recordFailure(keys);
    expect(fourth.exceeded).toMatchObject({ policy: { name: 'per-id' }, remaining: 0 });
  });

  it('applies only the policies that have a key', async () => {
    const count = await limiter.recordFailure({ 'per-address': '192.0.2.2' });
    expect(count.states.map((s) => s.policy.name)).toEqual(['per-address']);
  });

  it('a fresh limiter on the same store (another replica) is refused a slot at the limit from the store', async () => {
    const keys = { 'per-id': 'app_3' };
    for (let i = 0; i < 3; i++) await limiter.recordFailure(keys);
    const replica = new FailureLimiter(cache, 'unit', policies);
    expect(replica.blocked(keys)).toBeNull();
    const admission = await replica.reserve(keys);
    if (cache.mode === 'redis')
      expect(admission.refused).toMatchObject({
        policy: { name: 'per-id' },
        remaining: 0,
        resetMs: expect.any(Number),
      });
    else expect(admission.attempt).toBeDefined();
  });

  it('forget clears a key', async () => {
    const keys = { 'per-id': 'app_4' };
    for (let i = 0; i < 3; i++) await limiter.recordFailure(keys);
    expect(limiter.blocked(keys)).not.toBeNull();
    await limiter.forget('per-id', 'app_4');
    expect(limiter.blocked(keys)).toBeNull();
    expect((await limiter.reserve(keys)).attempt).toBeDefined();
    expect((await limiter.recordFailure(keys)).states[0].remaining).toBe(1);
  });

  it('reserve: 20 parallel attempts get exactly `limit` slots, atomically for every policy', async () => {
    const keys = { 'per-id': 'app_r1', 'per-address': '192.0.2.50' };
    const admissions = await Promise.all(Array.from({ length: 20 }, () => limiter.reserve(keys)));
    const admitted = admissions.filter((a) => a.attempt);
    expect(admitted).toHaveLength(3);
    expect(admissions.filter((a) => a.refused?.policy.name === 'per-id')).toHaveLength(17);
    // refused attempts took nothing: the address has 3 of its 5
    const other = await limiter.reserve({ 'per-id': 'app_r2', 'per-address': '192.0.2.50' });
    expect(other.attempt).toBeDefined();
    const count = await other.attempt!.failed();
    expect(count.states.map((s) => [s.policy.name, s.remaining])).toEqual([
      ['per-id', 2],
      ['per-address', 1],
    ]);
  });

  it('reserve: a success gives its slot back (and clears the policies it names), a failure keeps it', async () => {
    const keys = { 'per-id': 'app_r3', 'per-address': '192.0.2.51' };
    const [a, b, c] = await Promise.all([limiter.reserve(keys), limiter.reserve(keys), limiter.reserve(keys)]);
    expect((await limiter.reserve(keys)).refused).toMatchObject({ policy: { name: 'per-id' } });
    await a.attempt!.failed();
    await b.attempt!.succeeded();
    const d = await limiter.reserve(keys);
    expect(d.attempt).toBeDefined();
    await c.attempt!.succeeded(['per-id']);
    const after = await limiter.reserve(keys);
    const count = await after.attempt!.failed();
    // per-id was cleared by c; per-address holds a's failure, d's slot and this one
    expect(count.states.map((s) => [s.policy.name, s.remaining])).toEqual([
      ['per-id', 2],
      ['per-address', 2],
    ]);
    await expect(b.attempt!.succeeded()).rejects.toThrow('an attempt is settled once');
  });

  it('checkNow: 20 parallel failing checks run the check at most `limit` times', async () => {
    const keys = { 'per-id': 'app_c1', 'per-address': '192.0.2.52' };
    let checked = 0;
    const outcomes = Array.from({ length: 20 }, () =>
      limiter.checkNow(keys, () => {
        checked++;
        return false;
      }),
    );
    expect(checked).toBe(3);
    expect(outcomes.filter((o) => o.outcome === 'refused')).toHaveLength(17);
    const counts = await Promise.all(outcomes.flatMap((o) => (o.outcome === 'failed' ? [o.count] : [])));
    expect(counts.map((c) => c.states[0].remaining).sort()).toEqual([0, 1, 2]);
    expect(limiter.blocked(keys)).toMatchObject({ policy: { name: 'per-id' }, remaining: 0 });
  });

  it('checkNow: a passing check counts nothing and touches no store', async () => {
    const keys = { 'per-id': 'app_c2' };
    for (let i = 0; i < 10; i++) expect(limiter.checkNow(keys, () => true)).toEqual({ outcome: 'passed' });
    expect((await limiter.recordFailure(keys)).states[0].remaining).toBe(2);
  });

  describe('a policy that refuses only after the request failed under another (refusesOnlyAfter)', () => {
    const shared = [
      { name: 'per-id-and-address', limit: 10, windowSeconds: 60 },
      { name: 'per-id', limit: 3, windowSeconds: 60, refusesOnlyAfter: 'per-id-and-address' },
    ];
    const keysFrom = (id: string, address: string) => ({ 'per-id-and-address': `${id}|${address}`, 'per-id': id });

    it('reserve (in the store): past the id limit, only the addresses that failed are refused', async () => {
      const limited = new FailureLimiter(cache, 'shared', shared);
      for (const address of ['a1', 'a2', 'a3'])
        await (await limited.reserve(keysFrom('id_1', address))).attempt!.failed();
      expect((await limited.reserve(keysFrom('id_1', 'a1'))).refused).toMatchObject({ policy: { name: 'per-id' } });
      const fresh = await limited.reserve(keysFrom('id_1', 'a4'));
      expect(fresh.attempt).toBeDefined();
      await fresh.attempt!.failed();
      expect((await limited.reserve(keysFrom('id_1', 'a4'))).refused).toMatchObject({ policy: { name: 'per-id' } });
      // a replica reading the store decides the same
      const replica = new FailureLimiter(cache, 'shared', shared);
      if (cache.mode === 'redis') {
        expect((await replica.reserve(keysFrom('id_1', 'a2'))).refused).toMatchObject({ policy: { name: 'per-id' } });
        expect((await replica.reserve(keysFrom('id_1', 'a5'))).attempt).toBeDefined();
      }
      // without the key it depends on, it never refuses
      expect((await limited.reserve({ 'per-id': 'id_1' })).attempt).toBeDefined();
    });

    it('blocked, checkNow and reserveHere (in this process): the same', async () => {
      const limited = new FailureLimiter(cache, 'shared', shared);
      for (const address of ['b1', 'b2', 'b3']) {
        const outcome = limited.checkNow(keysFrom('id_2', address), () => false);
        expect(outcome.outcome).toBe('failed');
        if (outcome.outcome === 'failed') await outcome.count;
      }
      expect(limited.blocked(keysFrom('id_2', 'b1'))).toMatchObject({ policy: { name: 'per-id' } });
      expect(limited.blocked(keysFrom('id_2', 'b9'))).toBeNull();
      expect(limited.checkNow(keysFrom('id_2', 'b2'), () => true)).toMatchObject({ outcome: 'refused' });
      expect(limited.checkNow(keysFrom('id_2', 'b9'), () => true)).toEqual({ outcome: 'passed' });
      expect(await limited.reserveHere(keysFrom('id_2', 'b3'))).toMatchObject({
        refused: { policy: { name: 'per-id' } },
      });
      const here = await limited.reserveHere(keysFrom('id_2', 'b9'));
      expect(here.attempt).toBeDefined();
      await here.attempt!.succeeded();
    });
  });

  it('reserveHere: attempts in flight hold slots; one beyond waits for them instead of being refused', async () => {
    const keys = { 'per-id': 'app_h1' };
    const first = await limiter.reserveHere(keys);
    const second = await limiter.reserveHere(keys);
    const third = await limiter.reserveHere(keys);
    let fourth: Admission | null = null;
    const waiting = Promise.resolve(limiter.reserveHere(keys)).then((a) => (fourth = a));
    await new Promise((resolve) => setImmediate(resolve));
    expect(fourth).toBeNull();
    await first.attempt!.succeeded();
    await waiting;
    expect(fourth!.attempt).toBeDefined();
    // three failures: the next is refused at once, with the window's state
    await second.attempt!.failed();
    await third.attempt!.failed();
    await fourth!.attempt!.failed();
    const refused = await limiter.reserveHere(keys);
    expect(refused.refused).toMatchObject({ policy: { name: 'per-id' }, remaining: 0 });
    expect(limiter.blocked(keys)).not.toBeNull();
  });

  it('reserveHere: waiting attempts are refused once the ones in flight failed', async () => {
    const keys = { 'per-id': 'app_h2' };
    const held = await Promise.all([limiter.reserveHere(keys), limiter.reserveHere(keys), limiter.reserveHere(keys)]);
    const waiting = Array.from({ length: 5 }, () => Promise.resolve(limiter.reserveHere(keys)));
    await Promise.all(held.map((a) => a.attempt!.failed()));
    const late = await Promise.all(waiting);
    expect(late.every((a) => a.refused?.policy.name === 'per-id')).toBe(true);
  });
});

describe('FailureLimiter with Redis down', () => {
  let cache: RedisCache;
  beforeAll(async () => {
    cache = new RedisCache(`redis://127.0.0.1:${await freePort()}`, 'test:down:', testLogger);
  });
  afterAll(() => cache.close());

  it('answers 503 service_unavailable for a failure and a reservation, and still answers blocked() from memory', async () => {
    const limiter = new FailureLimiter(cache, 'unit', policies);
    const error = await limiter.recordFailure({ 'per-id': 'app_5' }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'service_unavailable', status: 503, headers: { 'Retry-After': '5' } });
    expect(await limiter.reserve({ 'per-id': 'app_5' }).catch((err: AppError) => err.code)).toBe('service_unavailable');
    expect(limiter.blocked({ 'per-id': 'app_5' })).toBeNull();
    // a passing synchronous check needs no store
    expect(limiter.checkNow({ 'per-id': 'app_5' }, () => true)).toEqual({ outcome: 'passed' });
  });
});

describe('rate-limit fields and the 429', () => {
  it('formats the draft RateLimit fields and a 429 in the shared shape', () => {
    expect(rateLimitPolicyField(policies)).toBe('"per-id";q=3;w=60, "per-address";q=5;w=120');
    const error = tooManyFailures({ policy: policies[0], remaining: 0, resetMs: 41200 });
    expect(error).toMatchObject({
      code: 'too_many_requests',
      status: 429,
      detail: 'Too many failed attempts; try again in 42 seconds.',
      attribute: null,
      headers: { 'Retry-After': '42', 'RateLimit-Policy': '"per-id";q=3;w=60', RateLimit: '"per-id";r=0;t=42' },
    });
  });
});

/** The address clientAddress gives for a request from 127.0.0.1 (over a real Express app) that carries X-Forwarded-For. */
const seen = async (trustProxy: string, forwardedFor?: string) => {
  const app = express();
  app.set('trust proxy', trustProxySetting(trustProxy));
  app.get('/', (req, res) => void res.json({ address: clientAddress(req), ip: req.ip }));
  const call = request(app).get('/');
  const res = await (forwardedFor === undefined ? call : call.set('X-Forwarded-For', forwardedFor));
  expect(res.status).toBe(200);
  return res.body as { address: string; ip: string };
};

describe('clientAddress', () => {
  /** What clientAddress makes of `ip`, as the address a trusted proxy forwarded. */
  const address = async (ip: string) => (await seen('true', ip)).address;

  it('writes IPv4-mapped IPv6 as IPv4 and keeps IPv4', async () => {
    expect(await address('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(await address('203.0.113.9')).toBe('203.0.113.9');
  });

  it('counts an IPv6 host by its /64', async () => {
    expect(await address('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(await address('2001:db8:1:2::ff')).toBe('2001:db8:1:2::/64');
    expect(await address('2001:0db8::1')).toBe('2001:db8:0:0::/64');
    expect(await address('::1')).toBe('0:0:0:0::/64');
  });
});

describe('clientAddress under TRUST_PROXY', () => {
  it('trusting no proxy, counts the peer and ignores X-Forwarded-For, as req.ip does', async () => {
    await expect(seen('false', '203.0.113.9')).resolves.toEqual({ address: '127.0.0.1', ip: '127.0.0.1' });
    await expect(seen('false')).resolves.toEqual({ address: '127.0.0.1', ip: '127.0.0.1' });
    await expect(seen('0', '203.0.113.9')).resolves.toEqual({ address: '127.0.0.1', ip: '127.0.0.1' });
  });

  it('trusting the proxy, counts the address it forwarded', async () => {
    await expect(seen('true', '198.51.100.7, 203.0.113.9')).resolves.toEqual({
      address: '198.51.100.7',
      ip: '198.51.100.7',
    });
    await expect(seen('1', '198.51.100.7, 203.0.113.9')).resolves.toMatchObject({ address: '203.0.113.9' });
    await expect(seen('loopback', '203.0.113.9')).resolves.toMatchObject({ address: '203.0.113.9' });
  });
});
