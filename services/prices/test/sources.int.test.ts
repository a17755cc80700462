import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { loadPricesConfig } from '../src/config';
import { pricesHarness, type PricesHarness } from './support';

/** A local price API answering whatever body it currently holds (or a 500 while down). */
class FakeSource {
  body = '{}';
  down = false;
  readonly requests: string[] = [];
  private server = http.createServer((req, res) => {
    this.requests.push(req.url ?? '');
    if (this.down) return void res.writeHead(500).end('down');
    res.writeHead(200, { 'content-type': 'application/json' }).end(this.body);
  });
  url = '';
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async stop() {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** A sample line of /metrics (the registry adds its service label). */
const metric = (name: string, source: string, value: number) =>
  new RegExp(`^${name}\\{source="${source}"(,service="prices")?\\} ${value}$`, 'm');
const secondsAgo = (s: number) => Math.floor(Date.now() / 1000) - s;
const iso = (unix: number) => new Date(unix * 1000).toISOString();

describe('several sources per token: median of the fresh ones, deviation bound, quorum', () => {
  // three APIs of different shapes: /simple/price (the built-in http feed), a CoinMarketCap-like
  // nested quote with an ISO time, and a flat map keyed by pair with a Unix time
  const alpha = new FakeSource();
  const beta = new FakeSource();
  const gamma = new FakeSource();
  let h: PricesHarness;
  const alphaSays = (usd: string, t: number) =>
    (alpha.body = `{"worldcoin-wld":{"usd":${usd},"last_updated_at":${t}}}`);
  const betaSays = (usd: string, t: number) =>
    (beta.body = `{"data":{"WLD":{"quote":{"USD":{"price":${usd},"last_updated":"${iso(t)}"}}}}}`);
  const gammaSays = (usd: string, t: number) => (gamma.body = `{"prices":{"wld-usd":{"p":"${usd}","t":${t}}}}`);

  beforeAll(async () => {
    await Promise.all([alpha.start(), beta.start(), gamma.start()]);
    const t = secondsAgo(30);
    alphaSays('1.50', t);
    betaSays('1.52', t);
    gammaSays('1.51', t);
    h = await pricesHarness({
      PRICE_FEEDS: 'http,beta,gamma',
      PRICE_HTTP_URL: alpha.url,
      PRICE_HTTP_IDS: 'WLD=worldcoin-wld',
      PRICE_HTTP_FIATS: 'USD',
      PRICE_HTTP_RETRIES: '0',
      PRICE_FEED_INTERVAL_SECONDS: '3600',
      PRICE_SOURCE_QUORUM: '2',
      PRICE_MAX_DEVIATION_PERCENT: '2',
      PRICE_SOURCES: JSON.stringify([
        {
          name: 'beta',
          url: `${beta.url}/v2/quotes?symbol={ids}&convert={FIATS}`,
          ids: { WLD: 'WLD' },
          price: 'data.{id}.quote.{FIAT}.price',
          time: 'data.{id}.quote.{FIAT}.last_updated',
        },
        {
          name: 'gamma',
          url: `${gamma.url}/all`,
          ids: { WLD: 'wld' },
          price: 'prices.{id}-{fiat}.p',
          time: 'prices.{id}-{fiat}.t',
        },
      ]),
    });
  });
  afterAll(async () => {
    await h.close();
    await Promise.all([alpha.stop(), beta.stop(), gamma.stop()]);
  });

  const run = async () => (await h.admin('post', '/feeds/run').expect(200)).body;
  const wldUsd = () => request(h.publicApp).get('/public/v1/prices/latest/wld').query({ fiatCurrencies: 'USD' });

  it('serves the median of the fresh sources, dated by the oldest source time used', async () => {
    const [ta, tb, tc] = [secondsAgo(40), secondsAgo(20), secondsAgo(10)];
    alphaSays('1.50', ta);
    betaSays('1.52', tb);
    gammaSays('1.51', tc);
    expect(await run()).toEqual({ http: 'ok', beta: 'ok', gamma: 'ok' });
    expect(beta.requests.at(-1)).toBe('/v2/quotes?symbol=WLD&convert=USD');
    const res = await wldUsd().expect(200);
    expect(res.body.result.prices.WLD.USD).toEqual({ asset: 'USD', amount: '1510000', decimals: 6, symbol: 'USD' });
    expect(res.body.result.observed_at.WLD.USD).toBe(iso(ta));
    expect(res.headers['x-observed-at']).toBe(iso(ta));
  });

  it('leaves out a source deviating from the median by more than the bound, and reports it', async () => {
    const t = secondsAgo(5);
    alphaSays('1.50', t);
    betaSays('1.51', t);
    gammaSays('1.80', t); // 19 % above the median of 1.51
    await run();
    const res = await wldUsd().expect(200);
    expect(res.body.result.prices.WLD.USD.amount).toBe('1505000'); // median of 1.50 and 1.51
    const feeds = (await h.admin('get', '/feeds').expect(200)).body;
    expect(feeds).toMatchObject({ quorum: 2, max_deviation_percent: 2 });
    const byName = Object.fromEntries(feeds.feeds.map((f: { name: string }) => [f.name, f]));
    expect(byName.gamma).toMatchObject({ deviating: ['WLD/USD'], prices: { values: 1, stale: 0 } });
    expect(byName.http.deviating).toEqual([]);
    const metrics = (await request(h.adminApp).get('/metrics').expect(200)).text;
    expect(metrics).toMatch(metric('price_source_deviating_quotes', 'gamma', 1));
    expect(metrics).toMatch(metric('price_source_deviating_quotes', 'http', 0));
    expect(metrics).toMatch(metric('price_source_last_run_ok', 'beta', 1));
  });

  it('one source down keeps serving within the quorum; below the quorum the price is unavailable, with the reason', async () => {
    const t = secondsAgo(5);
    alphaSays('1.50', t);
    betaSays('1.52', secondsAgo(3600)); // beta's own time: an hour old, whenever it is fetched
    gammaSays('1.51', t);
    // beta's earlier quotes age past PRICE_MAX_AGE_SECONDS as time passes
    await h.storage.db.query("UPDATE quotes SET observed_at = observed_at - interval '1 hour' WHERE source = 'beta'");
    await run();
    const two = await wldUsd().expect(200);
    expect(two.body.result.prices.WLD.USD.amount).toBe('1505000');
    gamma.down = true;
    gammaSays('1.90', t); // never seen: gamma is down, its last fresh quote (1.51) still counts
    expect(await run()).toMatchObject({ gamma: 'failed' });
    expect((await wldUsd().expect(200)).body.result.prices.WLD.USD.amount).toBe('1505000');
    const metrics = (await request(h.adminApp).get('/metrics').expect(200)).text;
    expect(metrics).toMatch(metric('price_source_last_run_ok', 'gamma', 0));
    expect(metrics).toMatch(metric('price_source_stale_quotes', 'beta', 1));
    // gamma comes back with a price far from alpha's: neither is within 2 % of their median, none agree
    gamma.down = false;
    gammaSays('1.70', secondsAgo(1));
    await run();
    const refused = await wldUsd();
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({
      code: 'price_unavailable',
      detail:
        'No fresh price for WLD/USD (0 of 2 fresh sources agree, 2 left out for deviating from the median; 2 needed); try again later.',
      attribute: null,
    });
  });

  it('checks PRICE_SOURCES and that PRICE_FEEDS names only known feeds', () => {
    expect(() => loadPricesConfig({ PRICE_FEEDS: 'seed,delta' })).toThrow(
      'PRICE_FEEDS names delta, which is neither seed, http, fx nor a source in PRICE_SOURCES',
    );
    expect(() => loadPricesConfig({ PRICE_SOURCES: '[{"name":"x","url":"ftp://a"}]' })).toThrow('PRICE_SOURCES');
    expect(() => loadPricesConfig({ PRICE_SOURCES: 'not json' })).toThrow('PRICE_SOURCES must be a JSON array');
  });
});
