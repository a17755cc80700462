import path from 'node:path';
import { createBus, createCache, type Cache, type InvalidationBus } from './cache';
import { createDatabase, migrate, pendingMigrations, readMigrations, type Db, type SharedEmbeddedPostgres } from './db';
import type { CommonConfig } from './config';
import type { Logger } from './logger';
import { isAppError } from './errors';

export interface Storage {
  db: Db;
  cache: Cache;
  /** Invalidation messages for in-process caches (Redis pub/sub, or in-process). */
  bus: InvalidationBus;
  /** Where the data lives, for people: a redacted URL or a directory. */
  describe: { database: string; cache: string };
  /**
   * The audit events' write-ahead journal (AuditJournal): with the embedded database `pnpm start` shares
   * between its services, DATA_DIR/audit-journal/<schema>; unset otherwise (each event is stored before answering).
   */
  auditJournalDir?: string;
  close(): Promise<void>;
}

const STARTUP_DEADLINE_MS = 30000;

/** Retries while the database is unreachable (it may start after us), up to 30 s, with backoff. */
async function withStartupRetries<T>(fn: () => Promise<T>, logger: Logger): Promise<T> {
  const deadline = Date.now() + STARTUP_DEADLINE_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isAppError(err) || err.code !== 'service_unavailable' || Date.now() > deadline) throw err;
      const delay = Math.min(5000, 250 * 2 ** attempt);
      logger.warn('database not reachable yet; retrying', { attempt, retry_in_ms: delay });
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

function redactUrl(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

/** Migrates at start (MIGRATE_ON_START, the default); with it false, refuses to start while migrations are pending. */
async function prepareSchema(db: Db, config: CommonConfig, migrationsDir: string, logger: Logger): Promise<void> {
  const migrations = readMigrations(migrationsDir);
  if (config.MIGRATE_ON_START !== false) {
    const applied = await withStartupRetries(() => migrate(db, migrations), logger);
    if (applied.length) logger.info('migrations applied', { versions: applied });
    return;
  }
  const pending = await withStartupRetries(() => pendingMigrations(db, migrations), logger);
  if (pending.length)
    throw new Error(
      `schema ${db.schema} has pending migrations (${pending.map((m) => m.name).join(', ')}) and MIGRATE_ON_START is false: ` +
        'run the migrate command first (node dist/main.js migrate)',
    );
}

/**
 * The `migrate` command: applies the service's pending migrations to its own database (DATABASE_URL, or
 * the embedded one under DATA_DIR/<service>/pg) and closes it. Returns the versions applied.
 */
export async function migrateDatabase(
  service: string,
  config: CommonConfig,
  migrationsDir: string,
  logger: Logger,
): Promise<number[]> {
  const embeddedDir = path.resolve(config.DATA_DIR, service, 'pg');
  const db = await createDatabase({
    url: config.DATABASE_URL,
    poolSize: config.DATABASE_POOL_SIZE,
    embeddedDir,
    schema: service,
    logger,
  });
  try {
    return await withStartupRetries(() => migrate(db, readMigrations(migrationsDir)), logger);
  } finally {
    await db.close();
  }
}

export interface StorageOverrides {
  schema?: string;
  cachePrefix?: string;
  /** The embedded Postgres this process shares between its services (pnpm start); ignored with DATABASE_URL. */
  sharedDatabase?: SharedEmbeddedPostgres;
}

/**
 * Opens the service's Postgres (real; or embedded: shared, or its own under DATA_DIR/<service>/pg),
 * migrates its schema, and opens its cache.
 */
export async function openStorage(
  service: string,
  config: CommonConfig,
  migrationsDir: string,
  logger: Logger,
  overrides: StorageOverrides = {},
): Promise<Storage> {
  const shared = config.DATABASE_URL ? undefined : overrides.sharedDatabase;
  const embeddedDir = shared ? shared.dir : path.resolve(config.DATA_DIR, service, 'pg');
  const schema = overrides.schema ?? service;
  const db = await createDatabase({
    url: config.DATABASE_URL,
    poolSize: config.DATABASE_POOL_SIZE,
    embeddedDir,
    schema,
    logger,
    shared,
  });
  try {
    await prepareSchema(db, config, migrationsDir, logger);
  } catch (err) {
    await db.close();
    throw err;
  }
  const prefix = overrides.cachePrefix ?? `attest:${service}:`;
  const cache = createCache(config.REDIS_URL, prefix, logger);
  const bus = createBus(config.REDIS_URL, prefix, logger);
  return {
    db,
    cache,
    bus,
    describe: {
      database: config.DATABASE_URL
        ? redactUrl(config.DATABASE_URL)
        : `embedded Postgres in ${embeddedDir}${shared ? ` (shared, schema ${schema})` : ''}`,
      cache: config.REDIS_URL ? redactUrl(config.REDIS_URL) : 'in-process cache',
    },
    ...(shared ? { auditJournalDir: path.resolve(shared.dir, '..', 'audit-journal', schema) } : {}),
    async close() {
      await bus.close();
      await cache.close();
      await db.close();
    },
  };
}
