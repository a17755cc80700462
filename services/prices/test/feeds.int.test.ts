import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { MemoryCache } from '@attest/common';
import { testLogger } from '@attest/testing';
import { configuredFeeds, FeedRunner, fxFeed, httpFeed } from '../src/feeds';
import { loadPricesConfig } from '../src/config';
import { priceStore, PriceService } from '../src/prices';
import { pricesHarness, type PricesHarness } from './support';

type Reply = { status?: number; body?: string; delayMs?: number };

/** A local price API whose answers the test scripts, one per request. */
class FakePriceApi {
  readonly requests: string[] = [];
  readonly headers: http.IncomingHttpHeaders[] = [];
  private replies: Reply[] = [];
  private server = http.createServer((req, res) => {
    this.requests.push(req.url ?? '');
    this.headers.push(req.headers);
    const reply = this.replies.shift() ?? { status: 500, body: 'no reply scripted' };
    setTimeout(() => {
      if (res.destroyed) return;
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' }).end(reply.body ?? '');
    }, reply.delayMs ?? 0);
  });
  url = '';
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  script(...replies: Reply[]) {
    this.replies = replies;
    this.requests.length = 0;
    this.headers.length = 0;
  }
  async stop() {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

describe('price feeds against a local HTTP server', () => {
  let api: FakePriceApi;
  let h: PricesHarness;
  beforeAll(async () => {
    api = new FakePriceApi();
    await api.start();
    h = await pricesHarness({ PRICE_FEEDS: 'seed' });
  });
  afterAll(async () => {
    await h.close();
    await api.stop();
  });

  const feed = () =>
    httpFeed({
      url: api.url,
      ids: { WLD: 'worldcoin-wld', USDCE: 'usd-coin' },
      fiats: ['USD', 'EUR'],
      timeoutMs: 200,
      retries: 2,
      backoffMs: 10,
    });
  const GOOD = '{"worldcoin-wld":{"usd":1.7890123456789012345,"eur":1.61},"usd-coin":{"usd":0.99998,"eur":0.92}}';

  it('reads the simple-price shape with exact numbers (no float rounding; past 18 decimals, half up)', async () => {
    api.script({ body: GOOD });
    const result = await feed().fetch();
    expect(api.requests[0]).toBe(
      '/simple/price?ids=worldcoin-wld,usd-coin&vs_currencies=usd,eur&include_last_updated_at=true',
    );
    const wldUsd = result.quotes.find((q) => q.token === 'WLD' && q.fiat === 'USD')!;
    expect(wldUsd.observation).toMatchObject({ amount: '1789012345678901235', decimals: 18, source: 'http' });
    expect(result.quotes).toHaveLength(4);
  });

  it('sends the API key header PRICE_HTTP_HEADER_NAME / PRICE_HTTP_HEADER_VALUE configure (a CoinGecko demo key)', async () => {
    api.script({ body: GOOD }, { body: GOOD });
    const env = {
      PRICE_FEEDS: 'http',
      PRICE_HTTP_URL: api.url,
      PRICE_HTTP_IDS: 'WLD=worldcoin-wld',
      PRICE_HTTP_FIATS: 'USD',
    };
    const [keyed] = configuredFeeds(
      loadPricesConfig({ ...env, PRICE_HTTP_HEADER_NAME: 'x-cg-demo-api-key', PRICE_HTTP_HEADER_VALUE: 'CG-demo-123' }),
    );
    const result = await keyed.fetch();
    expect(result.quotes.map((q) => `${q.token}/${q.fiat}`)).toEqual(['WLD/USD']);
    expect(api.headers[0]).toMatchObject({ 'x-cg-demo-api-key': 'CG-demo-123', accept: 'application/json' });
    const [plain] = configuredFeeds(loadPricesConfig(env));
    await plain.fetch();
    expect(api.headers[1]['x-cg-demo-api-key']).toBeUndefined();
  });

  it('retries 5xx and bad JSON with backoff, then succeeds', async () => {
    api.script({ status: 502, body: 'bad gateway' }, { body: '{"worldcoin-wld": {"usd": 1.5' }, { body: GOOD });
    const result = await feed().fetch();
    expect(api.requests).toHaveLength(3);
    expect(result.quotes).toHaveLength(4);
  });

  it('gives up after the retries on timeouts, with a clear error', async () => {
    api.script({ delayMs: 1000, body: GOOD }, { delayMs: 1000, body: GOOD }, { delayMs: 1000, body: GOOD });
    await expect(feed().fetch()).rejects.toThrow('Timed out after 200 ms');
    expect(api.requests).toHaveLength(3);
  });

  it('does not retry a 4xx', async () => {
    api.script({ status: 404, body: '{}' }, { body: GOOD });
    await expect(feed().fetch()).rejects.toThrow('HTTP 404');
    expect(api.requests).toHaveLength(1);
  });

  it('a failing feed keeps the last prices and the service recovers when the source does', async () => {
    const prices = new PriceService(priceStore(h.storage.db), h.storage.bus, 900000);
    const runner = new FeedRunner([feed()], prices, new MemoryCache(), 60000, testLogger);
    api.script({ body: GOOD });
    expect(await runner.runOnce(true)).toEqual({ http: 'ok' });
    const served = async () =>
      (await request(h.publicApp).get('/public/v1/prices/latest/wld').query({ fiatCurrencies: 'USD' })).body.result
        .prices.WLD.USD;
    expect(await served()).toEqual({ asset: 'USD', amount: '1789012345678901235', decimals: 18, symbol: 'USD' });
    api.script({ status: 500 }, { status: 500 }, { status: 500 });
    expect(await runner.runOnce(true)).toEqual({ http: 'failed' });
    expect((await served()).amount).toBe('1789012345678901235');
    api.script({ body: GOOD.replace('1.7890123456789012345', '1.8') });
    expect(await runner.runOnce(true)).toEqual({ http: 'ok' });
    expect(await served()).toEqual({ asset: 'USD', amount: '1800000', decimals: 6, symbol: 'USD' });
  });

  it('runs each feed on one replica per interval', async () => {
    const prices = new PriceService(priceStore(h.storage.db), h.storage.bus, 900000);
    const shared = new MemoryCache();
    const replicas = [0, 1, 2].map(() => new FeedRunner([feed()], prices, shared, 60000, testLogger));
    api.script({ body: GOOD }, { body: GOOD }, { body: GOOD });
    const outcomes = await Promise.all(replicas.map((r) => r.runOnce()));
    expect(outcomes.map((o) => o.http).sort()).toEqual(['ok', 'skipped', 'skipped']);
    expect(api.requests).toHaveLength(1);
  });

  it('an FX feed gives cross rates for currencies no token quote covers', async () => {
    const prices = new PriceService(priceStore(h.storage.db), h.storage.bus, 900000);
    await h.admin('post', '/prices').send({ token: 'WLD', fiat: 'USD', amount: '1.510763' }).expect(201);
    api.script({ body: '{"amount":1.0,"base":"USD","date":"2026-11-20","rates":{"ISK":138.45,"XYZ":2,"MNT":3450.5}}' });
    const runner = new FeedRunner(
      [fxFeed({ url: `${api.url}/latest?from=USD`, timeoutMs: 500, retries: 0 })],
      prices,
      new MemoryCache(),
      60000,
      testLogger,
    );
    expect(await runner.runOnce(true)).toEqual({ fx: 'ok' });
    const res = await request(h.publicApp).get('/public/v1/prices/latest/wld').query({ fiatCurrencies: 'ISK,MNT' });
    expect(res.body.result.prices.WLD).toEqual({
      ISK: { asset: 'ISK', amount: '209165137', decimals: 6, symbol: 'ISK' }, // 1.510763 × 138.45 = 209.16513735
      MNT: { asset: 'MNT', amount: '5212887732', decimals: 6, symbol: 'MNT' }, // 1.510763 × 3450.5 = 5212.8877315
    });
  });

  it('keeps the source’s observation time (last_updated_at), never one later than the fetch', async () => {
    const before = Date.now();
    api.script({
      body: '{"worldcoin-wld":{"usd":1.5,"eur":1.4,"last_updated_at":1795000000},"usd-coin":{"usd":1,"eur":0.92,"last_updated_at":9999999999}}',
    });
    const result = await feed().fetch();
    const at = (token: string) =>
      result.quotes.find((q) => q.token === token && q.fiat === 'USD')!.observation.observedAt;
    expect(at('WLD').toISOString()).toBe('2026-11-18T11:06:40.000Z');
    // a time ahead of our clock is taken as the fetch time
    expect(at('USDCE').getTime()).toBeGreaterThanOrEqual(before);
    expect(at('USDCE').getTime()).toBeLessThanOrEqual(Date.now());
    api.script({ body: '{"worldcoin-wld":{"usd":1.5,"last_updated_at":"yesterday"}}' });
    await expect(feed().fetch()).rejects.toThrow('held no usable prices');
  });

  it('a source answering old timestamps makes the price unavailable once stale, however often it is fetched', async () => {
    const prices = new PriceService(priceStore(h.storage.db), h.storage.bus, 900000);
    const source = (ids: Record<string, string>, fiats: string[]) =>
      httpFeed({ url: api.url, ids, fiats, timeoutMs: 500, retries: 0 });
    const runner = (f: ReturnType<typeof source>) => new FeedRunner([f], prices, new MemoryCache(), 60000, testLogger);
    const get = (query: Record<string, string>) =>
      request(h.publicApp).get('/public/v1/prices/latest/wld').query(query);
    // WLD/AFN: only this source quotes it (no FX rate either), observed a minute ago by the source
    const fresh = Math.floor(Date.now() / 1000) - 60;
    api.script({ body: `{"worldcoin-wld":{"afn":105.5,"last_updated_at":${fresh}}}` });
    expect(await runner(source({ WLD: 'worldcoin-wld' }, ['AFN'])).runOnce(true)).toEqual({ http: 'ok' });
    const ok = await get({ fiatCurrencies: 'AFN' });
    expect(ok.status).toBe(200);
    expect(ok.body.result.prices.WLD.AFN.amount).toBe('105500000');
    expect(ok.body.result.observed_at).toEqual({ WLD: { AFN: new Date(fresh * 1000).toISOString() } });
    expect(ok.headers['x-observed-at']).toBe(new Date(fresh * 1000).toISOString());
    expect(ok.headers['last-modified']).toBe(new Date(fresh * 1000).toUTCString());
    expect(ok.headers['access-control-expose-headers']).toContain('X-Observed-At');
    // USDCE/ALL: fetched again and again, the source says its price is an hour old: it is never served
    const old = Math.floor(Date.now() / 1000) - 3600;
    const stuck = runner(source({ USDCE: 'usd-coin' }, ['ALL']));
    for (let i = 0; i < 3; i++) {
      api.script({ body: `{"usd-coin":{"all":92.1,"last_updated_at":${old}}}` });
      expect(await stuck.runOnce(true)).toEqual({ http: 'ok' });
    }
    const stale = await get({ fiatCurrencies: 'ALL', cryptoCurrencies: 'USDCE' });
    expect(stale.status).toBe(503);
    expect(stale.body).toMatchObject({ code: 'price_unavailable', detail: expect.stringContaining('USDCE/ALL') });
  });

  it('refuses an FX answer on another base', async () => {
    api.script({ body: '{"base":"EUR","rates":{"USD":1.08}}' });
    await expect(fxFeed({ url: `${api.url}/latest`, timeoutMs: 500, retries: 0 }).fetch()).rejects.toThrow(
      'base must be USD',
    );
  });
});
