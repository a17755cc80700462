import path from 'node:path';
import { createCache, type Cache } from './cache';
import { createDatabase, migrate, readMigrations, type Db } from './db';
import type { CommonConfig } from './config';
import type { Logger } from './logger';

export interface Storage {
  db: Db;
  cache: Cache;
  /** Where the data lives, for people: a redacted URL or a directory. */
  describe: { database: string; cache: string };
  close(): Promise<void>;
}

function redactUrl(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

/** Opens the service's Postgres (real or embedded under DATA_DIR/<service>/pg), migrates it, and opens its cache. */
export async function openStorage(
  service: string,
  config: CommonConfig,
  migrationsDir: string,
  logger: Logger,
  overrides: { schema?: string; cachePrefix?: string } = {},
): Promise<Storage> {
  const embeddedDir = path.resolve(config.DATA_DIR, service, 'pg');
  const db = await createDatabase({ url: config.DATABASE_URL, embeddedDir, schema: overrides.schema ?? service, logger });
  try {
    const applied = await migrate(db, readMigrations(migrationsDir));
    if (applied.length) logger.info('migrations applied', { versions: applied });
  } catch (err) {
    await db.close();
    throw err;
  }
  const cache = createCache(config.REDIS_URL, overrides.cachePrefix ?? `attest:${service}:`, logger);
  return {
    db,
    cache,
    describe: {
      database: config.DATABASE_URL ? redactUrl(config.DATABASE_URL) : `embedded Postgres in ${embeddedDir}`,
      cache: config.REDIS_URL ? redactUrl(config.REDIS_URL) : 'in-process cache',
    },
    async close() {
      await cache.close();
      await db.close();
    },
  };
}
