import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Express } from 'express';
import winston from 'winston';
import { serve, type ServerHandle } from '../../src/lifecycle';
import { createDatabase, migrate, readMigrations, type Db } from '../../src/db';
import { createBus, MemoryCache, RedisCache, type Cache, type InvalidationBus } from '../../src/cache';
import { createLogger, type Logger } from '../../src/logger';

export const testLogger: Logger = createLogger('test', process.env.TEST_LOG_LEVEL ?? 'silent');

/** A JSON logger that keeps every line it is given, parsed, in `lines`. */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return {
    logger: winston.createLogger({
      format: winston.format.json(),
      transports: [new winston.transports.Stream({ stream })],
    }),
    lines,
  };
}

export interface TestStorage {
  db: Db;
  cache: Cache;
  bus: InvalidationBus;
  close(): Promise<void>;
}

const suffix = () => randomBytes(5).toString('hex');

/** A fresh database for one test file: a new schema on TEST_DATABASE_URL, or a new in-memory PGlite. */
export async function testDatabase(
  service: string,
  migrationsDir?: string,
  url = process.env.TEST_DATABASE_URL,
): Promise<Db> {
  const db = await createDatabase({ url, schema: url ? `${service}_t${suffix()}` : service, logger: testLogger });
  await db.query(`CREATE SCHEMA IF NOT EXISTS ${db.schema}`);
  if (migrationsDir) await migrate(db, readMigrations(migrationsDir));
  const close = db.close.bind(db);
  return Object.assign(db, {
    async close() {
      if (url) await db.query(`DROP SCHEMA IF EXISTS ${db.schema} CASCADE`).catch(() => undefined);
      await close();
    },
  });
}

/** A fresh cache namespace: a random key prefix on TEST_REDIS_URL, or a new in-process cache. */
export function testCache(service: string, url = process.env.TEST_REDIS_URL): Cache {
  return url ? new RedisCache(url, `test:${service}:${suffix()}:`, testLogger) : new MemoryCache();
}

/** A fresh invalidation bus: its own channel prefix on TEST_REDIS_URL (or the given Redis), or in-process. */
export function testBus(
  service: string,
  prefix = `test:${service}:${suffix()}:`,
  url = process.env.TEST_REDIS_URL,
): InvalidationBus {
  return createBus(url, prefix, testLogger);
}

/**
 * Storage for a test: on the test servers, or on given ones (`database`, `redis`: a throwaway Postgres,
 * a proxied Redis); `db`/`bus` are pieces shared with another instance (a replica: the same database,
 * a bus on the same channels), which the caller closes. close() closes only what this call made.
 */
export interface TestStorageOptions {
  database?: string;
  redis?: string;
  db?: Db;
  bus?: InvalidationBus;
}

export async function testStorage(
  service: string,
  migrationsDir: string,
  options: TestStorageOptions = {},
): Promise<TestStorage> {
  const redis = options.redis ?? process.env.TEST_REDIS_URL;
  const db =
    options.db ?? (await testDatabase(service, migrationsDir, options.database ?? process.env.TEST_DATABASE_URL));
  const cache = testCache(service, redis);
  const bus = options.bus ?? testBus(service, undefined, redis);
  return {
    db,
    cache,
    bus,
    async close() {
      if (!options.bus) await bus.close();
      await cache.close();
      if (!options.db) await db.close();
    },
  };
}

/** Runs `use` with a fresh harness from `make`, and closes the harness after, whatever happens. */
export async function withHarness<H extends { close(): Promise<void> }>(
  make: () => Promise<H>,
  use: (h: H) => Promise<void>,
): Promise<void> {
  const h = await make();
  try {
    await use(h);
  } finally {
    await h.close();
  }
}

export const randomHex = (bytes: number) => randomBytes(bytes).toString('hex');
export {
  checkedDocument,
  COMMON_ADMIN_PATHS,
  COMMON_PUBLIC_PATHS,
  expectDocumentMatchesRoutes,
  routesOf,
  undocumentedRoutes,
} from './openapi';
export * from './raw-http';
export * from './openapi-walk';
export * from './harness';
export * from './replicas';
export * from './waiting';
export * from './fuzz';
export * from './fuzz-surface';
export * from './fuzz-requests';
export * from './fuzz-judge';
export { describeNeeding, pgBinary } from './binaries';
export { CHROMIUM, launchChromium, submitSignIn } from './chromium';
export { CuttableProxy, cuttableRedis, freePort, ThrowawayPostgres, ThrowawayRedis } from './throwaway';

/** serve() on free loopback ports with an empty readiness and no storage to close: for tests of the listeners. */
export const serveOnFreePorts = (publicApp: Express, adminApp: Express): Promise<ServerHandle> =>
  serve({
    logger: testLogger,
    publicApp,
    adminApp,
    port: 0,
    adminPort: 0,
    adminHost: '127.0.0.1',
    readiness: { shuttingDown: false, checks: [] },
    shutdownTimeoutMs: 1000,
    onClose: async () => undefined,
  });
