/**
 * What the token exchange's audit event costs on the embedded database (issue 42), without HTTP: CPU ms of
 * this process (bench/README.md, "Three rows the full run found broken, and what the token exchange's audit
 * event costs").
 *
 * 1. Through the path `pnpm start` uses: a shared embedded PGlite on a data directory, `pg` over its unix socket,
 *    `auditStore(db).insert` of B `delegation.exchanged`-shaped events in one statement, for B in
 *    BENCH_AUDIT_SIZES (1,16,32,1,16,32); then `SELECT 1`.
 * 2. The audit_events table's variants, in a PGlite of its own in memory (Liftoff only, as `pnpm start` runs it),
 *    16 events a statement: as migrated, a BRIN index on `at`, without the `at` index, the primary key only.
 *
 *   pnpm exec tsx packages/common/test/audit-statements.ts
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import {
  auditStore,
  createDatabase,
  INSERT_EVENTS,
  insertDocument,
  createLogger,
  SharedEmbeddedPostgres,
  type AuditEvent,
} from '../src';

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const hex = (bytes = 16) => randomBytes(bytes).toString('hex');
const AUDIT_SQL = fs
  .readFileSync(path.resolve(__dirname, '../migrations/audit.sql'), 'utf8')
  .split('-- Named operator')[0];

/** An event shaped as the token exchange records it (services/identity/src/delegation/delegations.ts). */
const exchanged = (): AuditEvent => ({
  type: 'delegation.exchanged',
  actor: { type: 'app', id: `app_${hex(8)}`, requestId: hex(16), clientAddress: '127.0.0.1' },
  subject: hex(21),
  detail: {
    agent_id: `app_${hex(8)}`,
    resource: 'https://api.example.test/mcp',
    scope: 'api:read',
    act: { sub: `app_${hex(8)}` },
    subject_client_id: `app_${hex(8)}`,
    token_id: hex(16),
  },
});
const batch = (size: number) => Array.from({ length: size }, exchanged);

async function throughThePool(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-bench-audit-'));
  const logger = createLogger('bench', 'error', 'json');
  const db = await createDatabase({
    schema: 'public',
    logger,
    shared: new SharedEmbeddedPostgres(path.join(dir, 'pg')),
  });
  try {
    await db.query(AUDIT_SQL);
    const store = auditStore(db);
    for (let i = 0; i < 300; i++) await store.insert(batch(16));
    const sizes = (process.env.BENCH_AUDIT_SIZES ?? '1,16,32,1,16,32').split(',').map(Number);
    for (const size of sizes) {
      const batches = Array.from({ length: Math.ceil(8000 / size) }, () => batch(size));
      const start = cpuMs();
      for (const events of batches) await store.insert(events);
      const ms = cpuMs() - start;
      console.log(
        `through pg: ${size} a statement: ${(ms / batches.length).toFixed(3)} ms a statement, ${(ms / (batches.length * size)).toFixed(4)} ms an event`,
      );
    }
    const start = cpuMs();
    for (let i = 0; i < 3000; i++) await db.query('SELECT 1');
    console.log(`through pg: SELECT 1: ${((cpuMs() - start) / 3000).toFixed(3)} ms`);
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const document = (size: number) => insertDocument(batch(size));

async function tableVariants(): Promise<void> {
  v8.setFlagsFromString('--liftoff-only');
  const AT_INDEX = 'CREATE INDEX audit_events_at_idx ON audit_events (at);';
  const TYPE_INDEX = 'CREATE INDEX audit_events_type_idx ON audit_events (type, id);';
  const variants: [string, string][] = [
    ['as migrated', AUDIT_SQL],
    ['BRIN on at', AUDIT_SQL.replace(AT_INDEX, 'CREATE INDEX audit_events_at_brin ON audit_events USING brin (at);')],
    ['no at index', AUDIT_SQL.replace(AT_INDEX, '')],
    ['primary key only', AUDIT_SQL.replace(AT_INDEX, '').replace(TYPE_INDEX, '')],
  ];
  for (const [label, schema] of variants) {
    const pg = await PGlite.create();
    await pg.exec(schema);
    for (let i = 0; i < 300; i++) await pg.query(INSERT_EVENTS, [document(16)]);
    const docs = Array.from({ length: 200 }, () => document(16));
    const rounds: string[] = [];
    for (let round = 0; round < 3; round++) {
      const start = cpuMs();
      for (let k = 0; k < 5; k++) for (const doc of docs) await pg.query(INSERT_EVENTS, [doc]);
      rounds.push(((cpuMs() - start) / (1000 * 16)).toFixed(4));
    }
    console.log(`table, ${label}: ${rounds.join(' / ')} ms an event (16 a statement)`);
    await pg.close();
  }
}

async function main(): Promise<void> {
  await throughThePool();
  await tableVariants();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
