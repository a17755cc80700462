import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, migrate, readMigrations, SHARED_MIGRATIONS_DIR } from '../src/db';
import { testDatabase, testLogger } from './support';

function migrationsDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-mig-'));
  for (const [name, sql] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), sql);
  return dir;
}

describe('migrations', () => {
  it('applies numbered files once, in order, inside the service schema', async () => {
    const db = await testDatabase('migtest');
    try {
      const dir = migrationsDir({
        '002_add.sql': 'ALTER TABLE things ADD COLUMN size integer NOT NULL DEFAULT 0;',
        '001_init.sql': 'CREATE TABLE things (id serial PRIMARY KEY, name text NOT NULL);',
      });
      expect(await migrate(db, readMigrations(dir))).toEqual([1, 2]);
      expect(await migrate(db, readMigrations(dir))).toEqual([]);
      await db.query('INSERT INTO things (name, size) VALUES ($1, $2)', ['a', 3]);
      const rows = await db.query<{ table_schema: string }>(
        "SELECT table_schema FROM information_schema.tables WHERE table_name = 'things'",
      );
      expect(rows.map((r) => r.table_schema)).toContain(db.schema);
      const applied = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(applied.map((r) => r.version)).toEqual([1, 2]);
    } finally {
      await db.close();
    }
  });

  it('applies each migration once when several replicas start together (advisory lock)', async () => {
    const db = await testDatabase('migtest');
    const url = process.env.TEST_DATABASE_URL;
    // against a real server: three separate pools, as three replicas would have
    const replicas = url
      ? await Promise.all([1, 2, 3].map(() => createDatabase({ url, schema: db.schema, logger: testLogger })))
      : [db, db, db];
    try {
      const dir = migrationsDir({
        '001_init.sql': 'CREATE TABLE counters (id int PRIMARY KEY); INSERT INTO counters VALUES (1);',
        '002_more.sql': 'INSERT INTO counters VALUES (2);',
      });
      const results = await Promise.all(replicas.map((r) => migrate(r, readMigrations(dir))));
      expect(results.flat().sort()).toEqual([1, 2]);
      expect(await db.query('SELECT id FROM counters ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
    } finally {
      if (url) await Promise.all(replicas.map((r) => r.close()));
      await db.close();
    }
  });

  it('rolls back a failing migration and records nothing for it', async () => {
    const db = await testDatabase('migtest');
    try {
      const dir = migrationsDir({
        '001_init.sql': 'CREATE TABLE good (id int);',
        '002_bad.sql': 'CREATE TABLE half (id int); SELECT * FROM no_such_table;',
      });
      await expect(migrate(db, readMigrations(dir))).rejects.toThrow(/002_bad.sql failed/);
      const tables = await db.query(
        "SELECT 1 FROM information_schema.tables WHERE table_name = 'half' AND table_schema = $1",
        [db.schema],
      );
      expect(tables).toHaveLength(0);
      const applied = await db.query<{ version: number }>('SELECT version FROM schema_migrations');
      expect(applied.map((r) => r.version)).toEqual([1]);
    } finally {
      await db.close();
    }
  });

  it('includes a shared migration file byte for byte, applied in the service schema', async () => {
    const db = await testDatabase('migtest');
    try {
      const dir = migrationsDir({
        '001_init.sql': 'CREATE TABLE things (id int);\n\n\\include @attest/common/migrations/audit.sql\n',
      });
      const [m] = readMigrations(dir);
      const shared = fs.readFileSync(path.join(SHARED_MIGRATIONS_DIR, 'audit.sql'), 'utf8');
      expect(m.sql).toBe(`CREATE TABLE things (id int);\n\n${shared}`);
      expect(await migrate(db, readMigrations(dir))).toEqual([1]);
      expect(await migrate(db, readMigrations(dir))).toEqual([]);
      const tables = await db.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
        [db.schema],
      );
      expect(tables.map((t) => t.table_name)).toEqual(['admin_tokens', 'audit_events', 'schema_migrations', 'things']);
    } finally {
      await db.close();
    }
  });

  it('refuses an include of anything but a shared migration file, and a line left unexpanded fails as SQL', async () => {
    for (const target of ['../../package.json', '@attest/common/migrations/../package.json', 'audit.sql'])
      expect(() => readMigrations(migrationsDir({ '001_x.sql': `\\include ${target}\n` }))).toThrow(
        /001_x.sql: \\include names a file of @attest\/common\/migrations\//,
      );
    const db = await testDatabase('migtest');
    try {
      const raw = [{ version: 1, name: '001_x.sql', sql: '\\include @attest/common/migrations/audit.sql\n' }];
      await expect(migrate(db, raw)).rejects.toThrow(/001_x.sql failed/);
    } finally {
      await db.close();
    }
  });

  it('transactions roll back on error and keep NUMERIC precision', async () => {
    const db = await testDatabase('migtest');
    try {
      await db.query('CREATE TABLE amounts (v numeric(78,0))');
      await expect(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO amounts VALUES ($1)', ['1']);
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await db.query('SELECT * FROM amounts')).toEqual([]);
      await db.query('INSERT INTO amounts VALUES ($1)', ['123456789012345678901234567890123']);
      expect((await db.query<{ v: string }>('SELECT v + 1 AS v FROM amounts'))[0].v).toBe(
        '123456789012345678901234567890124',
      );
    } finally {
      await db.close();
    }
  });
});
