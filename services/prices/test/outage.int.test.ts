import request from 'supertest';
import { pendingInvalidations } from '@attest/common';
import {
  cuttableRedis,
  describeNeeding,
  once503sEnd,
  until,
  type CuttableProxy,
  type ThrowawayRedis,
} from '@attest/testing';
import { pricesHarness, type PricesHarness } from './support';

describeNeeding(['redis-server'], 'prices while Redis is unreachable (throwaway redis-server behind a proxy)', () => {
  let redis: ThrowawayRedis;
  let proxy: CuttableProxy;
  let h: PricesHarness;

  beforeAll(async () => {
    ({ redis, proxy } = await cuttableRedis());
    h = await pricesHarness({}, { redis: proxy.url });
  }, 90000);

  afterAll(async () => {
    await h?.close();
    await proxy?.stop();
    await redis?.stop();
  });

  afterEach(() => proxy.heal());

  const wldUsd = () => request(h.publicApp).get('/public/v1/prices/latest/wld').query({ fiatCurrencies: 'USD' });

  it('reports a committed `price set` as a success, and serves the new price once Redis is back', async () => {
    expect((await wldUsd()).body.result.prices.WLD.USD.amount).toBe('1510763');
    proxy.cut();
    const set = await h.admin('post', '/prices').send({ token: 'WLD', fiat: 'USD', amount: '1.75' });
    expect({ status: set.status, body: set.body }).toEqual({
      status: 201,
      body: { token: 'WLD', fiat: 'USD', amount: '1750000', decimals: 6 },
    });
    const history = await h.admin('get', '/prices/WLD/USD/history');
    expect(history.body[0]).toEqual(expect.objectContaining({ amount: '1750000', source: 'manual' }));

    proxy.heal();
    await until(() => pendingInvalidations(h.storage.cache) === 0);
    const after = await once503sEnd(wldUsd);
    expect(after.status).toBe(200);
    expect(after.body.result.prices.WLD.USD.amount).toBe('1750000');
  }, 30000);
});
