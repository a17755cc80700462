import request from 'supertest';
import {
  CuttableProxy,
  describeNeeding,
  eventually,
  freePort,
  pgBinary,
  ThrowawayPostgres,
  ThrowawayRedis,
} from '@attest/testing';
import { createApp, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';

const binaries = ['redis-server', pgBinary('initdb'), pgBinary('pg_ctl')];

describeNeeding(binaries, 'identity readiness: sign-in needs both the cache and Postgres (throwaway servers)', () => {
  let redis: ThrowawayRedis;
  let proxy: CuttableProxy;
  let pg: ThrowawayPostgres;
  let h: IdentityHarness;
  let app: { app_id: string };

  beforeAll(async () => {
    redis = new ThrowawayRedis(await freePort());
    pg = new ThrowawayPostgres(await freePort());
    await Promise.all([redis.start(), pg.init().then(() => pg.start())]);
    proxy = new CuttableProxy(redis.port);
    await proxy.start();
    h = await identityHarness({}, { database: pg.url, redis: proxy.url });
    app = await createApp(h);
  }, 90000);

  afterAll(async () => {
    await h?.close();
    await proxy?.stop();
    await redis?.stop();
    await pg?.destroy();
  });

  const readyz = () => request(h.publicApp).get('/readyz');
  const authorize = () =>
    request(h.publicApp)
      .get('/authorize')
      .query({ response_type: 'code', scope: 'openid', client_id: app.app_id, redirect_uri: REDIRECT_URI });

  it('is not ready while the cache (sessions, codes) is unreachable', async () => {
    expect((await readyz()).body).toEqual({ status: 'ready', checks: { database: 'ok', cache: 'ok' } });
    proxy.cut();
    try {
      const ready = await readyz();
      expect({ status: ready.status, body: ready.body }).toEqual({
        status: 503,
        body: { status: 'unavailable', checks: { database: 'ok', cache: 'unavailable' } },
      });
      expect((await authorize()).status).toBe(503);
    } finally {
      proxy.heal();
    }
    await eventually(async () => expect((await readyz()).status).toBe(200));
  }, 30000);

  it('is not ready while Postgres (apps, users) is down', async () => {
    await pg.stop();
    try {
      await eventually(async () =>
        expect((await readyz()).body.checks).toEqual({ database: 'unavailable', cache: 'ok' }),
      );
      expect((await readyz()).status).toBe(503);
      expect((await authorize()).status).toBe(503);
    } finally {
      await pg.start();
    }
    await eventually(async () => expect((await readyz()).status).toBe(200));
  }, 60000);
});
