/**
 * Our services as an outsider runs them: embedded (`pnpm start` itself, as users run it: pnpm
 * and its program, scripts/start.ts, one process for the three services) or on real Postgres + Redis (each service
 * standalone, one process each, its compiled JavaScript as the images run it: node
 * services/<name>/dist/main.js with the image's NODE_OPTIONS). Every server process runs pinned to the
 * server core.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createDatabase, createLogger, type Db } from '@attest/common';
import { freePort, ThrowawayRedis } from '../packages/common/test/support/throwaway';
import { stackEnv } from '../test/support';
import { imageNodeOptions, serviceEntry } from './build';
import { PNPM_START, startServer, waitReady, type ServerProcess } from './server';
import type { Pinning } from './system';

export type Mode = 'embedded' | 'real';
export const SERVICES = ['identity', 'transactions', 'prices'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface Deployment {
  mode: Mode;
  env: NodeJS.ProcessEnv;
  /** Loopback origins of the three public APIs. */
  origins: Record<ServiceName, string>;
  /** embedded: one process ("pnpm start"); real: one per service. */
  servers(): ServerProcess[];
  /** Opens a service's database for bulk seeding; embedded mode stops the stack meanwhile and restarts it after. */
  withDatabase<T>(service: ServiceName, fn: (db: Db) => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

const quiet = createLogger('bench', 'silent');

async function deployEnv(
  mode: Mode,
  logLevel: string | undefined,
  real?: { databaseUrl: string; redisUrl: string; secrets: Record<string, string> },
  chainRpcUrl?: string,
): Promise<NodeJS.ProcessEnv> {
  const env = await stackEnv();
  // the x402 verify row's chain (bench/chain-stub.ts): the transactions service's watcher and x402 ask it
  if (chainRpcUrl) env.CHAIN_RPC_URL = chainRpcUrl;
  // the services' own default (info: one log line per request) unless BENCH_LOG_LEVEL says otherwise
  if (logLevel) env.LOG_LEVEL = logLevel;
  else delete env.LOG_LEVEL;
  // the driver is one address at many thousand req/s: the per-address limit stays on (its cost is measured) but high
  env.PRICE_RATE_LIMIT_PER_MINUTE = '1000000000';
  // the stream row's 10,000 subscribers come from the one driver address too
  env.PRICE_STREAM_MAX_PER_ADDRESS = '20000';
  env.PRICE_STREAM_MAX_CONNECTIONS = '20000';
  if (mode === 'real' && real) {
    Object.assign(env, {
      DATABASE_URL: real.databaseUrl,
      REDIS_URL: real.redisUrl,
      ...real.secrets,
      // the bench measures the seed (demo) prices; with a real database prices needs the opt-in
      PRICE_FEEDS_ALLOW_SEED: 'true',
    });
  }
  return env;
}

function origins(env: NodeJS.ProcessEnv): Record<ServiceName, string> {
  return {
    identity: `http://127.0.0.1:${env.IDENTITY_PORT}`,
    transactions: `http://127.0.0.1:${env.TRANSACTIONS_PORT}`,
    prices: `http://127.0.0.1:${env.PRICES_PORT}`,
  };
}

/**
 * Starts with fresh ports and a fresh data directory; up to three times, as a start-up can fail on a
 * loaded shared machine (another program took a port meanwhile; embedded Postgres slow to open).
 */
async function withRetries<T>(what: string, start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= 3) throw err;
      process.stdout.write(
        `  ${what} did not start (${(err instanceof Error ? err.message : String(err)).split('\n')[0]}); trying again\n`,
      );
    }
  }
}

/** `pnpm start` (embedded PGlite + in-process cache), its data in a fresh temporary DATA_DIR. */
export function startEmbedded(
  pinning: Pinning,
  logDir: string,
  logLevel?: string,
  chainRpcUrl?: string,
): Promise<Deployment> {
  return withRetries('pnpm start', async () => {
    const env = await deployEnv('embedded', logLevel, undefined, chainRpcUrl);
    const o = origins(env);
    let server: ServerProcess;
    const start = async () => {
      server = startServer(pinning, 'pnpm-start', PNPM_START, env, logDir);
      try {
        await Promise.all(Object.values(o).map((origin) => waitReady(server, `${origin}/readyz`)));
      } catch (err) {
        await server.stop();
        throw err;
      }
    };
    try {
      await start();
    } catch (err) {
      fs.rmSync(env.DATA_DIR!, { recursive: true, force: true });
      throw err;
    }
    return {
      mode: 'embedded' as const,
      env,
      origins: o,
      servers: () => [server],
      async withDatabase<T>(service: ServiceName, fn: (db: Db) => Promise<T>): Promise<T> {
        await server.stop();
        // pnpm start keeps one embedded database for its services, a schema each (DATA_DIR/pg)
        const db = await createDatabase({
          embeddedDir: path.resolve(env.DATA_DIR!, 'pg'),
          schema: service,
          logger: quiet,
        });
        try {
          return await fn(db);
        } finally {
          await db.close();
          await withRetries('pnpm start (again)', start);
        }
      },
      async stop() {
        await server.stop();
        fs.rmSync(env.DATA_DIR!, { recursive: true, force: true });
      },
    };
  });
}

/** Drops and recreates the bench database on the Postgres server (never touches any other database). */
export async function recreateDatabase(serverUrl: string, name: string): Promise<string> {
  const admin = await createDatabase({ url: serverUrl, schema: 'public', logger: quiet, poolSize: 1 });
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const admin = await createDatabase({ url: serverUrl, schema: 'public', logger: quiet, poolSize: 1 });
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.close();
  }
}

/** A throwaway redis-server (no persistence) on a spare loopback port; stopped by the bench. */
export async function startRedis(): Promise<ThrowawayRedis> {
  const redis = new ThrowawayRedis(await freePort());
  await redis.start();
  return redis;
}

/**
 * The three services standalone, one process each, on the given Postgres database and Redis: their
 * build output (the caller runs ensureBuilt() first) with their image's NODE_OPTIONS.
 */
export function startReal(
  pinning: Pinning,
  logDir: string,
  databaseUrl: string,
  redisUrl: string,
  logLevel?: string,
  chainRpcUrl?: string,
): Promise<Deployment> {
  // made once: an attempt that failed may have stored keys encrypted with them (a retry keeps the database)
  const secrets = {
    ADMIN_TOKEN: randomBytes(24).toString('base64url'),
    IDENTITY_SECRET: randomBytes(32).toString('base64url'),
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
    API_KEY_SECRET: randomBytes(32).toString('base64url'),
  };
  return withRetries('the services', async () => {
    const env = await deployEnv('real', logLevel, { databaseUrl, redisUrl, secrets }, chainRpcUrl);
    const o = origins(env);
    const servers = SERVICES.map((name) => {
      const nodeOptions = imageNodeOptions(name);
      const own = nodeOptions ? { ...env, NODE_OPTIONS: nodeOptions } : env;
      return startServer(pinning, name, serviceEntry(name), own, logDir);
    });
    try {
      await Promise.all(SERVICES.map((name, i) => waitReady(servers[i], `${o[name]}/readyz`)));
    } catch (err) {
      await Promise.all(servers.map((s) => s.stop()));
      fs.rmSync(env.DATA_DIR!, { recursive: true, force: true });
      throw err;
    }
    return {
      mode: 'real' as const,
      env,
      origins: o,
      servers: () => servers,
      async withDatabase<T>(service: ServiceName, fn: (db: Db) => Promise<T>): Promise<T> {
        const db = await createDatabase({ url: databaseUrl, schema: service, logger: quiet, poolSize: 1 });
        try {
          return await fn(db);
        } finally {
          await db.close();
        }
      },
      async stop() {
        await Promise.all(servers.map((s) => s.stop()));
        fs.rmSync(env.DATA_DIR!, { recursive: true, force: true });
      },
    };
  });
}
