import request from 'supertest';
import { pricesHarness, type PricesHarness } from './support';

describe('GET /widget.js', () => {
  let h: PricesHarness;
  beforeAll(async () => {
    h = await pricesHarness();
  });
  afterAll(() => h.close());

  it('serves the <attest-price> component as JavaScript any origin may load, cacheable, with an ETag', async () => {
    const res = await request(h.publicApp).get('/widget.js').set('Origin', 'https://shop.example');
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=3600',
      'access-control-allow-origin': '*',
      'cross-origin-resource-policy': 'cross-origin',
      'x-content-type-options': 'nosniff',
    });
    expect(res.headers.etag).toMatch(/^"[\w-]{27}"$/);
    expect(res.text).toContain("customElements.define('attest-price'");
    expect(res.text).toContain('Intl.NumberFormat');
    expect(res.text).not.toMatch(/\bimport\b|require\(/);
    const again = await request(h.publicApp).get('/widget.js').set('If-None-Match', res.headers.etag);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('the price API it calls answers browsers of any origin, exposing the ETag', async () => {
    const preflight = await request(h.publicApp)
      .options('/public/v1/miniapps/prices')
      .set('Origin', 'https://shop.example')
      .set('Access-Control-Request-Headers', 'if-none-match');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/If-None-Match/);
    const res = await request(h.publicApp)
      .get('/public/v1/miniapps/prices?fiatCurrencies=USD')
      .set('Origin', 'https://shop.example');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-expose-headers']).toMatch(/ETag/);
  });
});
