import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate, readMigrations, type Db } from '@attest/common';
import { testDatabase } from '@attest/testing';
import { ROOT } from './support';

/**
 * One source for the audit trail's tables (packages/common/migrations/audit.sql), which identity,
 * transactions and prices each apply to their own schema through a migration that includes it. Earlier
 * releases applied these migrations written out in full, and the runner records a migration by version and
 * name and never runs a recorded one again: so the SQL they read now must be those same bytes — a database
 * migrated then sees nothing new, and a fresh one gets the same tables.
 */
const SHARED = '\\include @attest/common/migrations/audit.sql';
const AUDIT_MIGRATIONS = [
  // SHA-256 of each file as released, written out in full (commit 48e991e and before)
  {
    service: 'identity',
    name: '007_admin_audit.sql',
    sha256: '3d9b16dd549a27460dcf893a3cebc3bf2f739695c142d7f8d4da4bc756cc3046',
  },
  {
    service: 'transactions',
    name: '005_audit.sql',
    sha256: 'f8b4557dbb62cd105fce6637d020b5db721db72d7158a300f894f10f411ca613',
  },
  {
    service: 'prices',
    name: '004_audit.sql',
    sha256: 'aa9b707d80cad28812b23ef0acb1c4097a7e290bd646dc48db5a15b121eadebd',
  },
];

const migrationsDir = (service: string) => path.join(ROOT, 'services', service, 'migrations');

/** The service's migrations as files written out in full (no include), as earlier releases shipped them. */
function writtenOut(service: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `attest-${service}-released-`));
  for (const m of readMigrations(migrationsDir(service))) fs.writeFileSync(path.join(dir, m.name), m.sql);
  return dir;
}

/** What the schema holds of the audit trail: columns, indexes, triggers, functions (schema name elided). */
async function auditCatalog(db: Db) {
  const elide = (rows: object[]) => JSON.parse(JSON.stringify(rows).replaceAll(`${db.schema}.`, 'S.'));
  const tables = ['audit_events', 'admin_tokens'];
  return {
    columns: await db.query(
      `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = ANY($2) ORDER BY table_name, ordinal_position`,
      [db.schema, tables],
    ),
    indexes: elide(
      await db.query(
        'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = ANY($2) ORDER BY 1',
        [db.schema, tables],
      ),
    ),
    constraints: await db.query(
      `SELECT conname, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = $1 AND conrelid::regclass::text LIKE ANY($2) ORDER BY 1`,
      [db.schema, tables.map((t) => `%${t}`)],
    ),
    triggers: await db.query(
      `SELECT trigger_name, event_manipulation, action_timing, action_statement FROM information_schema.triggers
        WHERE trigger_schema = $1 ORDER BY 1`,
      [db.schema],
    ),
    functions: await db.query(
      `SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1`,
      [db.schema],
    ),
  };
}

const recorded = (db: Db) =>
  db.query<{ version: number; name: string }>(
    `SELECT version, name FROM ${db.schema}.schema_migrations ORDER BY version`,
  );

describe('the audit migration: one source, applied by each service to its own schema', () => {
  it.each(AUDIT_MIGRATIONS)(
    '$service/$name includes it and reads as the same bytes as the released file',
    ({ service, name, sha256 }) => {
      const raw = fs.readFileSync(path.join(migrationsDir(service), name), 'utf8');
      expect(raw.split('\n')).toContain(SHARED);
      const migration = readMigrations(migrationsDir(service)).find((m) => m.name === name)!;
      // a changed audit.sql would make fresh databases differ from migrated ones: add a migration instead
      expect(crypto.createHash('sha256').update(migration.sql).digest('hex')).toBe(sha256);
    },
  );

  it('is the only place that creates the audit tables', () => {
    for (const service of AUDIT_MIGRATIONS.map((m) => m.service))
      for (const file of fs.readdirSync(migrationsDir(service)))
        expect({
          file,
          own: /audit_events|admin_tokens/.test(fs.readFileSync(path.join(migrationsDir(service), file), 'utf8')),
        }).toEqual({
          file,
          own: false,
        });
  });

  describe.each(AUDIT_MIGRATIONS)('$service', ({ service, name }) => {
    let migrated: Db;
    let fresh: Db;
    afterAll(async () => {
      await migrated?.close();
      await fresh?.close();
    });

    it(`a database migrated by the release before (${name} written out in full) sees nothing new`, async () => {
      migrated = await testDatabase(service);
      const released = readMigrations(writtenOut(service));
      expect(released.every((m) => !m.sql.includes('\\include'))).toBe(true);
      expect(await migrate(migrated, released)).toEqual(released.map((m) => m.version));
      const before = { recorded: await recorded(migrated), catalog: await auditCatalog(migrated) };
      expect(before.recorded.map((r) => r.name)).toContain(name);

      expect(await migrate(migrated, readMigrations(migrationsDir(service)))).toEqual([]);
      expect({ recorded: await recorded(migrated), catalog: await auditCatalog(migrated) }).toEqual(before);
    });

    it('a fresh database gets the same audit tables, append-only', async () => {
      fresh = await testDatabase(service);
      const migrations = readMigrations(migrationsDir(service));
      expect(await migrate(fresh, migrations)).toEqual(migrations.map((m) => m.version));
      expect(await recorded(fresh)).toEqual(await recorded(migrated));
      const catalog = await auditCatalog(fresh);
      expect(catalog).toEqual(await auditCatalog(migrated));
      expect(catalog.columns.map((c) => (c as { column_name: string }).column_name)).toEqual([
        'name',
        'token_hash',
        'created_at',
        'created_by',
        'id',
        'at',
        'type',
        'actor_type',
        'actor',
        'subject',
        'request_id',
        'client_address',
        'detail',
      ]);
      const names = (rows: object[], key: string) => rows.map((r) => (r as Record<string, string>)[key]);
      expect(names(catalog.indexes, 'indexname')).toEqual(
        expect.arrayContaining(['audit_events_at_idx', 'audit_events_type_idx', 'admin_tokens_token_hash_key']),
      );
      expect(names(catalog.triggers, 'trigger_name')).toContain('audit_events_no_update');
      expect(names(catalog.functions, 'proname')).toContain('audit_events_append_only');
      await fresh.query(`INSERT INTO ${fresh.schema}.audit_events (type, actor_type) VALUES ('test', 'system')`);
      await expect(fresh.query(`UPDATE ${fresh.schema}.audit_events SET type = 'changed'`)).rejects.toThrow(
        /audit_events is append-only/,
      );
    });
  });
});
