import request from 'supertest';
import { describeNeeding, eventually, freePort, pgBinary, ThrowawayPostgres } from '@attest/testing';
import { pricesHarness, type PricesHarness } from './support';

describeNeeding(
  [pgBinary('initdb'), pgBinary('pg_ctl')],
  'prices readiness while Postgres is down (throwaway Postgres)',
  () => {
    let pg: ThrowawayPostgres;
    let h: PricesHarness;

    beforeAll(async () => {
      pg = new ThrowawayPostgres(await freePort());
      await pg.init();
      await pg.start();
      // the seed feed refreshes the price every second while Postgres answers; a price lives 8 s
      h = await pricesHarness({ PRICE_MAX_AGE_SECONDS: '8', PRICE_FEED_INTERVAL_SECONDS: '1' }, { database: pg.url });
    }, 90000);

    afterAll(async () => {
      await h?.close();
      await pg?.destroy();
    });

    const readyz = () => request(h.publicApp).get('/readyz');
    const wldUsd = () => request(h.publicApp).get('/public/v1/prices/latest/wld').query({ fiatCurrencies: 'USD' });

    it('stays ready and serving from memory while it holds a fresh price; not ready once that price is stale', async () => {
      expect((await readyz()).body).toEqual({
        status: 'ready',
        checks: { database: 'ok', cache: 'ok', price_snapshot: 'ok' },
      });
      await pg.stop();
      await eventually(async () => expect((await readyz()).body.checks.database).toBe('unavailable'));
      const ready = await readyz();
      expect({ status: ready.status, body: ready.body }).toEqual({
        status: 200,
        body: { status: 'ready', checks: { database: 'unavailable', cache: 'ok', price_snapshot: 'ok' } },
      });
      const served = await wldUsd();
      expect(served.status).toBe(200);
      expect(served.body.result.prices.WLD.USD.amount).toBe('1510763');

      // no feed can write while Postgres is down: the price in memory turns stale and is never served stale
      await eventually(async () => expect((await readyz()).status).toBe(503));
      const notReady = await readyz();
      expect({ status: notReady.status, body: notReady.body }).toEqual({
        status: 503,
        body: {
          status: 'unavailable',
          checks: { database: 'unavailable', cache: 'ok', price_snapshot: 'unavailable' },
        },
      });
      expect((await wldUsd()).status).toBe(503);

      await pg.start();
      await eventually(async () => expect((await readyz()).status).toBe(200));
      // the next feed run writes a fresh price again
      await eventually(async () => expect((await wldUsd()).status).toBe(200));
      expect((await readyz()).body.checks).toEqual({ database: 'ok', cache: 'ok', price_snapshot: 'ok' });
    }, 90000);
  },
);
