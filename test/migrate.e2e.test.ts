import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createDatabase, createLogger, startService, type CommonConfig, type ServiceDefinition } from '@attest/common';
import { identityService } from '../services/identity/src/main';
import { pricesService } from '../services/prices/src/main';
import { transactionsService } from '../services/transactions/src/main';
import { freePort } from '../packages/common/test/support/throwaway';
import { freshDatabase, type FreshDatabase } from './fresh-database';
import { ROOT, runTsx } from './support';

const SERVICES: { name: string; def: ServiceDefinition<CommonConfig> }[] = [
  { name: 'identity', def: identityService as unknown as ServiceDefinition<CommonConfig> },
  { name: 'transactions', def: transactionsService as unknown as ServiceDefinition<CommonConfig> },
  { name: 'prices', def: pricesService as unknown as ServiceDefinition<CommonConfig> },
];

const secrets = (): NodeJS.ProcessEnv => ({
  ADMIN_TOKEN: randomBytes(24).toString('base64url'),
  IDENTITY_SECRET: randomBytes(32).toString('base64url'),
  KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
  API_KEY_SECRET: randomBytes(32).toString('base64url'),
  // with a real database prices refuses the demo feed unless told (see the seed test below)
  PRICE_FEEDS_ALLOW_SEED: 'true',
  LOG_LEVEL: 'warn',
});

const migrationFiles = (name: string) =>
  fs
    .readdirSync(path.join(ROOT, 'services', name, 'migrations'))
    .filter((f) => f.endsWith('.sql'))
    .sort();

/** The migrations recorded in the service's schema of that database; null when it was never migrated. */
async function recorded(name: string, env: NodeJS.ProcessEnv): Promise<string[] | null> {
  const db = await createDatabase({
    url: env.DATABASE_URL,
    embeddedDir: path.resolve(env.DATA_DIR!, name, 'pg'),
    schema: name,
    logger: createLogger('test', 'silent'),
  });
  try {
    const [table] = await db.query<{ name: string | null }>('SELECT to_regclass($1)::text AS name', [
      `${name}.schema_migrations`,
    ]);
    if (!table.name) return null;
    return (await db.query<{ name: string }>(`SELECT name FROM ${name}.schema_migrations ORDER BY version`)).map(
      (r) => r.name,
    );
  } finally {
    await db.close();
  }
}

async function serviceEnv(name: string, database: FreshDatabase): Promise<NodeJS.ProcessEnv> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const upper = name.toUpperCase();
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...database.env,
    ...secrets(),
    [`${upper}_PORT`]: String(port),
    [`${upper}_ADMIN_PORT`]: String(adminPort),
  };
}

// The mechanism is shared (packages/common); prices goes through the whole cycle, the others through the command.
describe.each(SERVICES.filter((s) => s.name === 'prices'))('$name: migrations as a separate step', ({ name, def }) => {
  let database: FreshDatabase;
  let env: NodeJS.ProcessEnv;
  beforeEach(async () => {
    database = await freshDatabase();
    env = await serviceEnv(name, database);
  });
  afterEach(() => database.drop());

  it('with MIGRATE_ON_START=false, refuses to start on an unmigrated database and migrates nothing', async () => {
    await expect(startService(def, def.loadConfig({ ...env, MIGRATE_ON_START: 'false' }))).rejects.toThrow(
      `schema ${name} has pending migrations (${migrationFiles(name).join(', ')}) and MIGRATE_ON_START is false: run the migrate command first`,
    );
    expect(await recorded(name, env)).toBeNull();
  }, 120000);

  it('`node dist/main.js migrate` applies every migration and exits 0; then the service starts without migrating', async () => {
    const run = await runTsx(`services/${name}/src/main.ts`, ['migrate'], env);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(await recorded(name, env)).toEqual(migrationFiles(name));
    const again = await runTsx(`services/${name}/src/main.ts`, ['migrate'], env);
    expect(again.code).toBe(0);

    const running = await startService(def, def.loadConfig({ ...env, MIGRATE_ON_START: 'false' }));
    try {
      const ready = await fetch(`http://127.0.0.1:${env[`${name.toUpperCase()}_PORT`]}/readyz`);
      expect(ready.status).toBe(200);
    } finally {
      await running.stop();
    }
    expect(await recorded(name, env)).toEqual(migrationFiles(name));
  }, 180000);
});

describe.each(SERVICES.filter((s) => s.name !== 'prices'))('$name: the migrate command', ({ name }) => {
  it('applies every migration of the service and exits 0', async () => {
    const database = await freshDatabase();
    try {
      const env = await serviceEnv(name, database);
      const run = await runTsx(`services/${name}/src/main.ts`, ['migrate'], env);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(await recorded(name, env)).toEqual(migrationFiles(name));
    } finally {
      await database.drop();
    }
  }, 180000);
});

describe('the service command line', () => {
  it('refuses unknown arguments', async () => {
    const run = await runTsx('services/prices/src/main.ts', ['migrat'], {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
    });
    expect(run).toMatchObject({
      code: 2,
      stderr: 'prices: unknown arguments: migrat\nUsage: node dist/main.js [migrate]\n',
    });
  }, 60000);

  it('refuses to run prices on a real database with the seed (demo) feed unless PRICE_FEEDS_ALLOW_SEED=true', async () => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: 'postgres://attest@127.0.0.1:1/attest',
      ...secrets(),
    };
    delete env.PRICE_FEEDS_ALLOW_SEED;
    const run = await runTsx('services/prices/src/main.ts', [], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('PRICE_FEEDS includes seed (fixed demo prices) while DATABASE_URL is set');
    expect(run.stderr).toContain('PRICE_FEEDS_ALLOW_SEED=true');
  }, 60000);
});
