import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createDatabase, createLogger } from '@attest/common';

export interface FreshDatabase {
  /** The variables a service needs to use it: DATABASE_URL (real server), or DATA_DIR (embedded). */
  env: NodeJS.ProcessEnv;
  drop(): Promise<void>;
}

async function admin(url: string, sql: string): Promise<void> {
  const db = await createDatabase({ url, schema: 'public', logger: createLogger('test', 'silent'), poolSize: 1 });
  try {
    await db.query(sql);
  } finally {
    await db.close();
  }
}

/**
 * A database of its own for a process under test: a new database on TEST_DATABASE_URL (a service's
 * schema name is fixed, so a schema of its own is not enough), or a new DATA_DIR for embedded Postgres.
 */
export async function freshDatabase(url = process.env.TEST_DATABASE_URL): Promise<FreshDatabase> {
  if (!url) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-fresh-'));
    return { env: { DATA_DIR: dir }, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `attest_t${randomBytes(6).toString('hex')}`;
  await admin(url, `CREATE DATABASE ${name}`);
  const own = new URL(url);
  own.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: own.toString(), DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'attest-fresh-')) },
    drop: () => admin(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
