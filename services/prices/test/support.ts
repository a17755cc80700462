import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { LocalCache, storageChecks } from '@attest/common';
import { testLogger, testStorage, type TestStorage, type TestStorageOptions } from '@attest/testing';
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

export async function pricesHarness(
  env: NodeJS.ProcessEnv = {},
  shared: TestStorageOptions = {},
): Promise<PricesHarness> {
  const storage = await testStorage('prices', path.join(__dirname, '..', 'migrations'), shared);
  const config = loadPricesConfig({
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'attest-prices-')),
    LOG_LEVEL: 'silent',
    ...env,
  });
  const built = await buildApp({
    config,
    storage: { ...storage, describe: { database: 'test', cache: 'test' } },
    logger: testLogger,
    readiness: { shuttingDown: false, checks: storageChecks(storage) },
    adminToken: ADMIN_TOKEN,
  });
  return {
    publicApp: built.publicApp,
    adminApp: built.adminApp,
    storage,
    admin: (method, route) =>
      request(built.adminApp)[method](`/admin${route}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`),
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
