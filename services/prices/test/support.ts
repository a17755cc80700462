import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalCache } from '@attest/common';
import {
  harnessDeps,
  serviceHarness,
  testLogger,
  testStorage,
  type ServiceHarness,
  type TestStorageOptions,
} from '@attest/testing';
import { PRICE_SNAPSHOT_CACHE } from '../src/prices';
import { buildApp } from '../src/app';
import { loadPricesConfig } from '../src/config';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export type PricesHarness = ServiceHarness;

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
  const built = await buildApp({ config, ...harnessDeps(storage, testLogger, ADMIN_TOKEN) });
  return serviceHarness(built, storage, ADMIN_TOKEN);
}

/** What a replica's write announces: every price snapshot on the bus is dropped and reloaded at its next use. */
export async function reloadSnapshots(h: Pick<PricesHarness, 'storage'>): Promise<void> {
  await new LocalCache(h.storage.bus, { name: PRICE_SNAPSHOT_CACHE, ttlMs: 1, max: 1 }).invalidateAll();
}
