import request from 'supertest';
import { describeFuzz } from '@attest/testing';
import { pricesHarness, type PricesHarness } from './support';

const TEST_FILE = 'services/prices/test/fuzz.int.test.ts';

/** Issue #9: random hostile requests to every public prices endpoint; see docs/reliability.md. */
describeFuzz('prices', TEST_FILE, {
  // the limit has its own test (rate-limit.int.test.ts)
  harness: () => pricesHarness({ PRICE_RATE_LIMIT_PER_MINUTE: '0' }),
  async surface(h: PricesHarness) {
    const served = await request(h.publicApp).get('/public/v1/prices/latest/wld').query({ fiatCurrencies: 'USD' });
    const conditional: [string, string][] = [
      ['If-None-Match', String(served.headers.etag)],
      ['If-Modified-Since', String(served.headers['last-modified'])],
      ['If-None-Match', '*'],
    ];
    const names = ['fiatCurrencies', 'cryptoCurrencies'];
    const base = ['fiatCurrencies=USD', 'fiatCurrencies=USD,EUR&cryptoCurrencies=WLD,USDCE', 'fiatCurrencies=JPY'];
    return {
      endpoints: [
        {
          path: '/public/v1/prices/latest/{}',
          errors: 'json',
          methods: ['GET', 'OPTIONS'],
          values: ['wld', 'WLD', 'usdce'],
          names,
          base,
          headers: conditional,
        },
        {
          path: '/public/v1/miniapps/prices',
          errors: 'json',
          methods: ['GET', 'OPTIONS'],
          names,
          base,
          headers: conditional,
        },
        { path: '/openapi.json', errors: 'json', methods: ['GET'] },
        { path: '/healthz', errors: 'json', methods: ['GET'] },
        { path: '/readyz', errors: 'json', methods: ['GET'] },
      ],
      names,
      values: [
        'USD',
        'EUR',
        'usd,eur',
        'USD,,EUR',
        'JPY,IDR,USD',
        'WLD',
        'WLD,USDCE',
        'usdce',
        'XXX',
        'USD%2CEUR',
        ',',
      ],
      headers: conditional,
    };
  },
});
