import request from 'supertest';
import { AddressLimit } from '../src/kernel/address-limit';
import { pricesHarness, type PricesHarness } from './support';

describe('rate limit of the public price API per address', () => {
  let h: PricesHarness;
  beforeAll(async () => {
    h = await pricesHarness({ PRICE_RATE_LIMIT_PER_MINUTE: '3', TRUST_PROXY: 'loopback' });
  });
  afterAll(() => h.close());

  const get = (address: string) =>
    request(h.publicApp)
      .get('/public/v1/prices/latest/wld')
      .query({ fiatCurrencies: 'USD' })
      .set('X-Forwarded-For', address);

  it('answers with the RateLimit fields, then 429 with Retry-After past the limit; another address is unaffected', async () => {
    for (const left of [2, 1, 0]) {
      const res = await get('203.0.113.7').expect(200);
      expect(res.headers['ratelimit-policy']).toBe('"per-address";q=3;w=60');
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"per-address";r=${left};t=\\d+$`));
    }
    const refused = await get('203.0.113.7').expect(429);
    expect(refused.body).toEqual({
      code: 'too_many_requests',
      detail: expect.stringMatching(/^Too many requests from this address; try again in \d+ seconds\.$/),
      attribute: null,
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.headers.ratelimit).toMatch(/^"per-address";r=0;t=\d+$/);
    expect(refused.headers['access-control-allow-origin']).toBe('*');
    expect(refused.headers['access-control-expose-headers']).toContain('Retry-After');
    // the same limit at the mini-app path; another address has its own count
    await request(h.publicApp)
      .get('/public/v1/miniapps/prices')
      .query({ fiatCurrencies: 'USD' })
      .set('X-Forwarded-For', '203.0.113.7')
      .expect(429);
    await get('198.51.100.1').expect(200);
    // a preflight is never counted
    await request(h.publicApp)
      .options('/public/v1/prices/latest/wld')
      .set('X-Forwarded-For', '203.0.113.7')
      .expect(204);
  });
});

it('counts in fixed windows in memory: a new window starts afresh, and memory stays bounded', () => {
  let now = 120_000;
  const limit = new AddressLimit({ limit: 2, windowSeconds: 60, maxAddresses: 2, now: () => now });
  expect(limit.take('a').refused).toBeNull();
  now += 10_000;
  expect(limit.take('a').headers.RateLimit).toBe('"per-address";r=0;t=50');
  expect(limit.take('a').refused?.status).toBe(429);
  expect(limit.take('a').refused?.headers).toMatchObject({ 'Retry-After': '50' });
  now = 180_000; // the next window
  expect(limit.take('a').refused).toBeNull();
  // past maxAddresses a new address is served and not tracked
  limit.take('b');
  for (let i = 0; i < 5; i++) expect(limit.take('c').refused).toBeNull();
});
