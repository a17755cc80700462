import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { LocalCache, storageChecks, type Db, type InvalidationBus } from '@attest/common';
import { testBus, testCache, testDatabase, testLogger, type TestStorage } from '@attest/testing';
import { PRICE_SNAPSHOT_CACHE } from '../src/domain/prices';
import { buildApp } from '../src/app';
import { loadPricesConfig } from '../src/config';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface PricesHarness {
  publicApp: Express;
  adminApp: Express;
  storage: TestStorage;
  admin(method: 'get' | 'post', route: string): request.Test;
  close(): Promise<void>;
}

/**
 * `database`/`redis`: storage on given servers (a throwaway Postgres, a proxied Redis) instead of the test servers.
 * `db`/`bus`: pieces shared with another instance (a replica): the same database, a bus on the same channels;
 * the caller closes them.
 */
export interface HarnessStorage {
  database?: string;
  redis?: string;
  db?: Db;
  bus?: InvalidationBus;
}

export async function pricesHarness(env: NodeJS.ProcessEnv = {}, shared: HarnessStorage = {}): Promise<PricesHarness> {
  const redis = shared.redis ?? process.env.TEST_REDIS_URL;
  const db =
    shared.db ??
    (await testDatabase('prices', path.join(__dirname, '..', 'migrations'), shared.database ?? process.env.TEST_DATABASE_URL));
  const bus = shared.bus ?? testBus('prices', undefined, redis);
  const cache = testCache('prices', redis);
  const storage: TestStorage = {
    db,
    cache,
    bus,
    async close() {
      if (!shared.bus) await bus.close();
      await cache.close();
      if (!shared.db) await db.close();
    },
  };
  const config = loadPricesConfig({ DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'attest-prices-')), LOG_LEVEL: 'silent', ...env });
  const built = await buildApp({ config, storage: { ...storage, describe: { database: 'test', cache: 'test' } }, logger: testLogger, readiness: { shuttingDown: false, checks: storageChecks(storage) }, adminToken: ADMIN_TOKEN });
  return {
    publicApp: built.publicApp,
    adminApp: built.adminApp,
    storage,
    admin: (method, route) => request(built.adminApp)[method](`/admin${route}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`),
    async close() {
      await built.stop?.();
      await storage.close();
    },
  };
}

/** What a replica's write announces: every price snapshot on the bus is dropped and reloaded at its next use. */
export async function reloadSnapshots(h: Pick<PricesHarness, 'storage'>): Promise<void> {
  await new LocalCache(h.storage.bus, { name: PRICE_SNAPSHOT_CACHE, ttlMs: 1, max: 1 }).invalidateAll();
}
