import type { Express } from 'express';
import request from 'supertest';
import { storageChecks, type Readiness } from '../../src/http/health';
import type { Logger } from '../../src/logger';
import type { TestStorage } from './index';

/** What a service's buildApp takes in a test, besides its config: test storage, the test logger, readiness on that storage, the admin token. */
export interface HarnessDeps {
  storage: TestStorage & { describe: { database: string; cache: string } };
  logger: Logger;
  readiness: Readiness;
  adminToken: string;
}

export const harnessDeps = (storage: TestStorage, logger: Logger, adminToken: string): HarnessDeps => ({
  storage: { ...storage, describe: { database: 'test', cache: 'test' } },
  logger,
  readiness: { shuttingDown: false, checks: storageChecks(storage) },
  adminToken,
});

/** The two apps a service's buildApp returns, and how to stop what they started. */
export interface BuiltApps {
  publicApp: Express;
  adminApp: Express;
  stop?: () => Promise<void>;
}

export type AdminMethod = 'get' | 'post' | 'put' | 'delete';

/** A service built for a test: its apps, its storage, a request to its admin API with the token, close(). */
export interface ServiceHarness {
  publicApp: Express;
  adminApp: Express;
  storage: TestStorage;
  /** A request to `/admin${route}` with the admin token. */
  admin(method: AdminMethod, route: string): request.Test;
  /** Stops what the apps started, then closes the storage. */
  close(): Promise<void>;
}

export const serviceHarness = (built: BuiltApps, storage: TestStorage, adminToken: string): ServiceHarness => ({
  publicApp: built.publicApp,
  adminApp: built.adminApp,
  storage,
  admin: (method, route) =>
    request(built.adminApp)[method](`/admin${route}`).set('Authorization', `Bearer ${adminToken}`),
  async close() {
    await built.stop?.();
    await storage.close();
  },
});
