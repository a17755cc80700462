import request from 'supertest';
import { MemoryCache } from '@attest/common';
import { testLogger } from '@attest/testing';
import { percentChange, priceStore, QuotePurge } from '../src/prices';
import { pricesHarness, type PricesHarness } from './support';

const WLD_ID = 'eip155:480/erc20:0x2cFc85d8E48F8EAB294be644d9E25C3030863003';

describe('24 h change, history, CAIP-19 ids and quote retention', () => {
  let h: PricesHarness;
  beforeAll(async () => {
    h = await pricesHarness();
    // older quotes of WLD/USD from a feed (stale now: the seed's 1.510763 is served)
    await h.storage.db.query(
      `INSERT INTO quotes (token, fiat, amount, decimals, source, observed_at) VALUES
        ('WLD', 'USD', 1400000, 6, 'http', now() - interval '25 hours'),
        ('WLD', 'USD', 1450000, 6, 'http', now() - interval '2 hours'),
        ('WLD', 'USD', 1500000, 6, 'http', now() - interval '61 minutes')`,
    );
  });
  afterAll(() => h.close());

  const latest = (query: Record<string, string>) =>
    request(h.publicApp).get('/public/v1/prices/latest/wld').query(query);
  const history = (token: string, query: Record<string, string>) =>
    request(h.publicApp)
      .get(`/public/v1/prices/history/${encodeURIComponent(token)}`)
      .query(query);

  it('adds the change over 1 h and 24 h only when asked; 7 d is left out while history does not cover it', async () => {
    const plain = await latest({ fiatCurrencies: 'USD' }).expect(200);
    expect(plain.body.result.change).toBeUndefined();
    const res = await latest({ fiatCurrencies: 'USD', change: 'true' }).expect(200);
    expect(res.body.result.prices.WLD.USD.amount).toBe('1510763');
    // 1.510763 against 1.50 an hour ago and 1.40 a day ago
    expect(res.body.result.change).toEqual({ WLD: { USD: { '1h': '0.72', '24h': '7.91' } } });
    expect(res.headers.etag).not.toBe(plain.headers.etag);
    await latest({ fiatCurrencies: 'USD', change: 'true' }).set('If-None-Match', res.headers.etag).expect(304);
    expect((await latest({ fiatCurrencies: 'USD', change: 'maybe' })).body).toMatchObject({
      code: 'invalid_parameter',
      attribute: 'change',
    });
  });

  it('percent change: two decimals, half away from zero, signed', () => {
    const o = (amount: string, decimals = 6) => ({ amount, decimals, source: 's', observedAt: new Date() });
    expect(percentChange(o('990000'), o('1000000'))).toBe('-1.00');
    expect(percentChange(o('1000050'), o('1000000'))).toBe('0.01');
    expect(percentChange(o('1000000'), o('1000000'))).toBe('0.00');
    expect(percentChange(o('3000000'), o('1000000'))).toBe('200.00');
  });

  it('serves the history down-sampled at a stated interval, cached with an ETag', async () => {
    const res = await history('WLD', { fiat: 'usd' }).expect(200);
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const { result } = res.body;
    expect(result).toMatchObject({ token: 'WLD', fiat: 'USD', range: '24h', interval_seconds: 300 });
    expect(result.points.map((p: { amount: string }) => p.amount)).toEqual(['1450000', '1500000', '1510763']);
    for (const p of result.points) expect(Date.parse(p.t) % 300_000).toBe(0);
    await history('WLD', { fiat: 'USD' }).set('If-None-Match', res.headers.etag).expect(304);
    const week = await history('WLD', { fiat: 'USD', range: '7d' }).expect(200);
    expect(week.body.result.interval_seconds).toBe(3600);
    expect(week.body.result.points[0].amount).toBe('1400000');
    expect((await history('WLD', { fiat: 'USD', range: '1y' })).status).toBe(400);
    expect((await history('DOGE', { fiat: 'USD' })).body).toMatchObject({
      code: 'invalid_parameter',
      attribute: 'token',
    });
    expect((await history('WLD', {})).body).toMatchObject({ code: 'required', attribute: 'fiat' });
  });

  it('names tokens by CAIP-19 asset id as well as by code', async () => {
    const byId = await history(WLD_ID, { fiat: 'USD' }).expect(200);
    expect(byId.text).toBe((await history('wld', { fiat: 'USD' })).text);
    const res = await latest({ fiatCurrencies: 'USD', cryptoCurrencies: `${WLD_ID.toLowerCase()},USDCE` }).expect(200);
    expect(Object.keys(res.body.result.prices)).toEqual(['WLD', 'USDCE']);
    expect((await latest({ fiatCurrencies: 'USD', cryptoCurrencies: 'eip155:1/erc20:0xdead' })).body).toEqual({
      code: 'invalid_parameter',
      detail: 'Unknown token code: eip155:1/erc20:0xdead.',
      attribute: 'cryptoCurrencies',
    });
  });

  it('purges quotes past the retention by itself, keeping the latest of each source', async () => {
    await h.storage.db.query(
      `INSERT INTO quotes (token, fiat, amount, decimals, source, observed_at) VALUES
        ('WLD', 'USD', 1300000, 6, 'http', now() - interval '40 days'),
        ('USDCE', 'USD', 990000, 6, 'retired', now() - interval '40 days')`,
    );
    const purge = new QuotePurge(priceStore(h.storage.db), new MemoryCache(), 35, testLogger);
    expect(await purge.purge()).toBe(1);
    expect(await purge.purge()).toBe(0); // another pass within the hour is skipped (the lock)
    const left = await h.storage.db.query<{ source: string }>(
      "SELECT source FROM quotes WHERE observed_at < now() - interval '35 days'",
    );
    expect(left.map((r) => r.source)).toEqual(['retired']);
  });
});
