import fs from 'node:fs';
import path from 'node:path';
import type { Db } from './database';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Migration SQL that several services apply, each to its own schema (e.g. the audit trail): files in
 * packages/common/migrations, shipped with the package.
 */
export const SHARED_MIGRATIONS_DIR = path.join(__dirname, '..', '..', 'migrations');
const INCLUDE_PREFIX = '@attest/common/migrations/';

/**
 * A migration file's SQL, with each line `\include @attest/common/migrations/<file>.sql` replaced by that
 * shared file's content, byte for byte: a migration written out in full by an earlier release and one that
 * includes the same text now are the same SQL. (A line the loader did not replace fails as SQL, loudly.)
 */
export function migrationSql(file: string): string {
  return fs.readFileSync(file, 'utf8').replace(/^\\include +(\S+)[ \t]*(?:\n|$)/gm, (_, target: string) => {
    const name = target.startsWith(INCLUDE_PREFIX) ? target.slice(INCLUDE_PREFIX.length) : '';
    if (!/^[\w-]+\.sql$/.test(name))
      throw new Error(`${path.basename(file)}: \\include names a file of ${INCLUDE_PREFIX}, not ${target}`);
    return fs.readFileSync(path.join(SHARED_MIGRATIONS_DIR, name), 'utf8');
  });
}

export function readMigrations(dir: string): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d+_[\w-]+\.sql$/.test(f))
    .sort()
    .map((file) => ({
      version: Number(file.split('_')[0]),
      name: file,
      sql: migrationSql(path.join(dir, file)),
    }));
}

/**
 * Applies pending migrations in the service's own schema. An advisory lock keyed on the schema
 * makes this safe when many replicas start at once: one migrates, the others wait and find nothing to do.
 */
export async function migrate(db: Db, migrations: Migration[]): Promise<number[]> {
  const schema = db.schema;
  return db.withClient(async (client) => {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`attest:migrate:${schema}`]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(`SET search_path TO ${schema}, public`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const done = new Set(
        (await client.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations`)).map(
          (r) => r.version,
        ),
      );
      const applied: number[] = [];
      for (const m of migrations.filter((m) => !done.has(m.version))) {
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [
            m.version,
            m.name,
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw new Error(`Migration ${m.name} failed: ${(err as Error).message}`);
        }
        applied.push(m.version);
      }
      return applied;
    } finally {
      await client
        .query('SELECT pg_advisory_unlock(hashtext($1))', [`attest:migrate:${schema}`])
        .catch(() => undefined);
    }
  });
}

/** The migrations not yet applied to the service's schema (all of them when it was never migrated). */
export async function pendingMigrations(db: Db, migrations: Migration[]): Promise<Migration[]> {
  const [table] = await db.query<{ name: string | null }>('SELECT to_regclass($1)::text AS name', [
    `${db.schema}.schema_migrations`,
  ]);
  if (!table?.name) return migrations;
  const done = new Set(
    (await db.query<{ version: number }>(`SELECT version FROM ${db.schema}.schema_migrations`)).map((r) => r.version),
  );
  return migrations.filter((m) => !done.has(m.version));
}
