import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Router } from 'express';
import request from 'supertest';
import { createServiceApps, endpoint, openStorage, type Readiness, type Storage } from '../src';
import { testLogger } from './support';
import { describeNeeding, pgBinary } from './support/binaries';
import { freePort, ThrowawayPostgres, ThrowawayRedis } from './support/throwaway';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually(fn: () => Promise<void>, timeoutMs = 15000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(200);
    }
  }
}

describeNeeding(
  ['redis-server', pgBinary('initdb'), pgBinary('pg_ctl')],
  'storage outages (throwaway Redis and Postgres)',
  () => {
    let redis: ThrowawayRedis;
    let pg: ThrowawayPostgres;
    let storage: Storage;
    let app: ReturnType<typeof createServiceApps>['publicApp'];

    beforeAll(async () => {
      redis = new ThrowawayRedis(await freePort());
      pg = new ThrowawayPostgres(await freePort());
      await Promise.all([redis.start(), pg.init().then(() => pg.start())]);
      const migrations = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-mig-'));
      fs.writeFileSync(path.join(migrations, '001_init.sql'), 'CREATE TABLE notes (id serial PRIMARY KEY, body text);');
      storage = await openStorage(
        'outage',
        {
          DATABASE_URL: pg.url,
          REDIS_URL: redis.url,
          DATA_DIR: os.tmpdir(),
          LOG_LEVEL: 'silent',
          ADMIN_HOST: '127.0.0.1',
          TRUST_PROXY: 'false',
          SHUTDOWN_DELAY_MS: 0,
          SHUTDOWN_TIMEOUT_MS: 1000,
          BODY_LIMIT: '1kb',
          AUDIT_RETENTION_DAYS: 365,
        },
        migrations,
        testLogger,
      );
      const readiness: Readiness = {
        shuttingDown: false,
        checks: [
          { name: 'database', check: () => storage.db.ping() },
          { name: 'cache', check: () => storage.cache.ping() },
        ],
      };
      app = createServiceApps({
        logger: testLogger,
        readiness,
        adminToken: 'x'.repeat(30),
        trustProxy: 'false',
        bodyLimit: '1kb',
        publicRoutes(router: Router) {
          endpoint(router, '/notes', {
            GET: [async (_req, res) => void res.json(await storage.db.query('SELECT count(*)::int AS n FROM notes'))],
          });
          endpoint(router, '/counter', {
            GET: [async (_req, res) => void res.json({ n: await storage.cache.incr('hits', 60000) })],
          });
        },
        adminRoutes: () => undefined,
      }).publicApp;
    }, 60000);

    afterAll(async () => {
      await storage?.close();
      await redis?.stop();
      await pg?.destroy();
    });

    it('is ready while both servers run', async () => {
      const res = await request(app).get('/readyz');
      expect(res.status).toBe(200);
      expect((await request(app).get('/counter')).body).toEqual({ n: 1 });
    });

    it('answers 503 while Redis is down and recovers by itself when it returns', async () => {
      await redis.stop();
      await eventually(async () => {
        const ready = await request(app).get('/readyz');
        expect(ready.status).toBe(503);
        expect(ready.body.checks).toEqual({ database: 'ok', cache: 'unavailable' });
      });
      const res = await request(app).get('/counter');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        code: 'service_unavailable',
        detail: 'The cache is temporarily unavailable; try again shortly.',
        attribute: null,
      });
      await redis.start();
      await eventually(async () => {
        expect((await request(app).get('/readyz')).status).toBe(200);
        expect((await request(app).get('/counter')).status).toBe(200);
      });
    }, 40000);

    it('answers 503 while Postgres is down and recovers by itself when it returns', async () => {
      expect((await request(app).get('/notes')).body).toEqual([{ n: 0 }]);
      await pg.stop();
      await eventually(async () => {
        const ready = await request(app).get('/readyz');
        expect(ready.status).toBe(503);
        expect(ready.body.checks.database).toBe('unavailable');
      });
      const res = await request(app).get('/notes');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        code: 'service_unavailable',
        detail: 'The database is temporarily unavailable; try again shortly.',
        attribute: null,
      });
      await pg.start();
      await eventually(async () => {
        expect((await request(app).get('/readyz')).status).toBe(200);
        expect((await request(app).get('/notes')).body).toEqual([{ n: 0 }]);
      });
    }, 60000);
  },
);
