import request from 'supertest';
import { pricesHarness, reloadSnapshots, type PricesHarness } from './support';

describe('GET /public/v1/prices/latest/wld', () => {
  let h: PricesHarness;
  beforeAll(async () => {
    h = await pricesHarness();
  });
  afterAll(() => h.close());

  const get = (query: Record<string, string>, path = '/public/v1/prices/latest/wld') =>
    request(h.publicApp).get(path).query(query);

  it('serves SPEC 2.6 for the requested tokens and fiats (four prices)', async () => {
    const res = await get({ fiatCurrencies: 'USD,EUR', cryptoCurrencies: 'WLD,USDCE' });
    expect(res.status).toBe(200);
    const at = res.headers['x-observed-at'];
    expect(res.body).toEqual({
      result: {
        observed_at: { WLD: { USD: at, EUR: at }, USDCE: { USD: at, EUR: at } },
        prices: {
          WLD: {
            USD: { asset: 'USD', amount: '1510763', decimals: 6, symbol: 'USD' },
            EUR: { asset: 'EUR', amount: '1395112', decimals: 6, symbol: 'EUR' },
          },
          USDCE: {
            USD: { asset: 'USD', amount: '1000120', decimals: 6, symbol: 'USD' },
            EUR: { asset: 'EUR', amount: '923514', decimals: 6, symbol: 'EUR' },
          },
        },
      },
    });
    expect(res.text).toContain('"decimals":6');
  });

  it('defaults to the native token, is case-insensitive on input and upper case on output', async () => {
    const res = await get({ fiatCurrencies: ' usd ,eur' });
    expect(Object.keys(res.body.result.prices)).toEqual(['WLD']);
    expect(Object.keys(res.body.result.prices.WLD)).toEqual(['USD', 'EUR']);
  });

  it('is also served at /public/v1/miniapps/prices', async () => {
    const res = await get({ cryptoCurrencies: 'WLD,USDCE', fiatCurrencies: 'USD' }, '/public/v1/miniapps/prices');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.result.prices)).toEqual(['WLD', 'USDCE']);
  });

  it('serves every currency with an FX rate by cross rate, exactly', async () => {
    const res = await get({ fiatCurrencies: 'JPY,IDR' });
    expect(res.body.result.prices.WLD).toEqual({
      JPY: { asset: 'JPY', amount: '229364039', decimals: 6, symbol: 'JPY' },
      IDR: { asset: 'IDR', amount: '23722000626', decimals: 6, symbol: 'IDR' },
    });
  });

  it('errors: 400 required, 400 invalid_parameter naming the code, 404 for another token path', async () => {
    expect((await get({})).body).toEqual({
      code: 'required',
      detail: 'This attribute is required.',
      attribute: 'fiatCurrencies',
    });
    const fiat = await get({ fiatCurrencies: 'USD,XYZ' });
    expect(fiat.status).toBe(400);
    expect(fiat.body).toEqual({
      code: 'invalid_parameter',
      detail: 'Unknown fiat currency code: XYZ.',
      attribute: 'fiatCurrencies',
    });
    const token = await get({ fiatCurrencies: 'USD', cryptoCurrencies: 'WLD,DOGE' });
    expect(token.body).toEqual({
      code: 'invalid_parameter',
      detail: 'Unknown token code: DOGE.',
      attribute: 'cryptoCurrencies',
    });
    const other = await get({ fiatCurrencies: 'USD' }, '/public/v1/prices/latest/eth');
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('not_found');
  });

  it('503 price_unavailable for a known pair without a price, never a guess', async () => {
    const res = await get({ fiatCurrencies: 'USD,AFN' });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      code: 'price_unavailable',
      detail: 'No fresh price for WLD/AFN; try again later.',
      attribute: null,
    });
  });

  it('judges a repeated query string against the codes known now: refused alike each time, accepted once the code exists', async () => {
    const query = { fiatCurrencies: 'USD', cryptoCurrencies: 'WLD,NEWTOK' };
    const refused = { code: 'invalid_parameter', detail: 'Unknown token code: NEWTOK.', attribute: 'cryptoCurrencies' };
    for (let i = 0; i < 2; i++) {
      const res = await get(query);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: refused });
    }
    await h.storage.db.query("INSERT INTO tokens (code, name, decimals) VALUES ('NEWTOK', 'New token', 18)");
    await h.storage.db.query(
      "INSERT INTO quotes (token, fiat, amount, decimals, source, observed_at) VALUES ('NEWTOK', 'USD', 2500000, 6, 'test', now())",
    );
    try {
      await reloadSnapshots(h);
      const res = await get(query);
      expect(res.status).toBe(200);
      expect(res.body.result.prices.NEWTOK).toEqual({
        USD: { asset: 'USD', amount: '2500000', decimals: 6, symbol: 'USD' },
      });
      // the same string again, now parsed once for this snapshot, answers the same
      const again = await get(query);
      expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: res.body });
    } finally {
      await h.storage.db.query("DELETE FROM quotes WHERE token = 'NEWTOK'");
      await h.storage.db.query("DELETE FROM quote_sources WHERE token = 'NEWTOK'");
      await h.storage.db.query("DELETE FROM tokens WHERE code = 'NEWTOK'");
      await reloadSnapshots(h);
    }
    const gone = await get(query);
    expect({ status: gone.status, body: gone.body }).toEqual({ status: 400, body: refused });
  });

  it('refuses stale prices: past PRICE_MAX_AGE_SECONDS a price is unavailable, not served', async () => {
    await h.storage.db.query("UPDATE quotes SET observed_at = observed_at - interval '1 hour' WHERE token = 'ETH'");
    await h.storage.db.query("UPDATE fx_rates SET observed_at = observed_at - interval '1 hour' WHERE fiat = 'CHF'");
    await reloadSnapshots(h);
    const eth = await get({ fiatCurrencies: 'USD', cryptoCurrencies: 'ETH' });
    expect(eth.status).toBe(503);
    expect(eth.body.detail).toBe('No fresh price for ETH/USD; try again later.');
    const chf = await get({ fiatCurrencies: 'CHF' });
    expect(chf.status).toBe(503);
    expect(chf.body.detail).toBe('No fresh price for WLD/CHF; try again later.');
  });

  it('is open to browsers: CORS, short max-age, ETag and Last-Modified with 304s', async () => {
    const res = await get({ fiatCurrencies: 'USD' }).set('Origin', 'https://widget.example');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('public, max-age=30');
    expect(res.headers.etag).toMatch(/^"[\w-]+"$/);
    expect(new Date(res.headers['last-modified']).getTime()).toBeGreaterThan(0);
    const byTag = await get({ fiatCurrencies: 'USD' }).set('If-None-Match', res.headers.etag);
    expect(byTag.status).toBe(304);
    expect(byTag.text).toBe('');
    const byDate = await get({ fiatCurrencies: 'USD' }).set('If-Modified-Since', res.headers['last-modified']);
    expect(byDate.status).toBe(304);
    const preflight = await request(h.publicApp)
      .options('/public/v1/prices/latest/wld')
      .set('Origin', 'https://widget.example')
      .set('Access-Control-Request-Method', 'GET');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
  });

  it('shows a price set by an operator at the next request, and keeps the history', async () => {
    const before = await get({ fiatCurrencies: 'USD' });
    const set = await h.admin('post', '/prices').send({ token: 'wld', fiat: 'usd', amount: '1.62' });
    expect(set.status).toBe(201);
    expect(set.body).toEqual({ token: 'WLD', fiat: 'USD', amount: '1620000', decimals: 6 });
    const after = await get({ fiatCurrencies: 'USD' }).set('If-None-Match', before.headers.etag);
    expect(after.status).toBe(200);
    expect(after.body.result.prices.WLD.USD.amount).toBe('1620000');
    const history = await h.admin('get', '/prices/WLD/USD/history');
    expect(history.body.slice(0, 2).map((r: { amount: string; source: string }) => [r.amount, r.source])).toEqual([
      ['1620000', 'manual'],
      ['1510763', 'seed'],
    ]);
    const bad = await h.admin('post', '/prices').send({ token: 'WLD', fiat: 'USD', amount: '1,5' });
    expect(bad.status).toBe(400);
    expect(bad.body.attribute).toBe('amount');
  });
});
