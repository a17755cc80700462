/**
 * What a refresh token's rotation costs on the embedded database, without HTTP (issue 41, the refresh row): CPU
 * ms of this process, PGlite in memory with Liftoff only as `pnpm start` runs it. BENCH_ROTATIONS_PER_STATEMENT
 * (14) rotations in one statement, as the bench's 32 connections share them, on the tables of migration 018 (a
 * copy of the whole row, five indexes) and of 029 (a narrow successor row, its family's row apart), 20,000
 * families in each.
 *
 *   pnpm exec tsx packages/common/test/refresh-rotation-statements.ts
 */
import { randomBytes } from 'node:crypto';
import v8 from 'node:v8';
import { PGlite } from '@electric-sql/pglite';

v8.setFlagsFromString('--liftoff-only');

const ROUNDS = 3;
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const hex = () => randomBytes(32).toString('hex');

const SCHEMA_018 = `CREATE TABLE refresh_tokens (token_hash text PRIMARY KEY, family_id text NOT NULL, client_id text NOT NULL,
    user_id text NOT NULL, grant_data jsonb NOT NULL, sid text, jkt text, access_jti text NOT NULL,
    issued_at timestamptz NOT NULL DEFAULT now(), expires_at timestamptz NOT NULL, used_at timestamptz);
  CREATE INDEX ON refresh_tokens (family_id); CREATE INDEX ON refresh_tokens (sid);
  CREATE INDEX ON refresh_tokens (user_id, client_id); CREATE INDEX ON refresh_tokens (expires_at);`;
const ROTATE_018 = `WITH used AS (UPDATE refresh_tokens r SET used_at = now()
    FROM unnest($1::text[], $2::text[], $3::text[]) AS a(used_hash, next_hash, access_jti)
    WHERE r.token_hash = a.used_hash AND r.used_at IS NULL
    RETURNING a.next_hash, a.access_jti, r.family_id, r.client_id, r.user_id, r.grant_data, r.sid, r.jkt, r.expires_at)
  INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, grant_data, sid, jkt, access_jti, expires_at)
  SELECT next_hash, family_id, client_id, user_id, grant_data, sid, jkt, access_jti, expires_at FROM used RETURNING token_hash`;
const SCHEMA_029 = `CREATE TABLE refresh_families (family_id text PRIMARY KEY, client_id text NOT NULL, user_id text NOT NULL,
    grant_data jsonb NOT NULL, sid text, jkt text, expires_at timestamptz NOT NULL);
  CREATE INDEX ON refresh_families (sid); CREATE INDEX ON refresh_families (user_id, client_id);
  CREATE INDEX ON refresh_families (expires_at);
  CREATE TABLE refresh_tokens (token_hash text PRIMARY KEY, family_id text NOT NULL, access_jti text NOT NULL,
    issued_at timestamptz NOT NULL DEFAULT now(), used_at timestamptz) WITH (fillfactor = 80);
  CREATE INDEX ON refresh_tokens (family_id);`;
const ROTATE_029 = `WITH used AS (UPDATE refresh_tokens r SET used_at = now()
    FROM unnest($1::text[], $2::text[], $3::text[]) AS a(used_hash, next_hash, access_jti), refresh_families f
    WHERE r.token_hash = a.used_hash AND r.used_at IS NULL AND f.family_id = r.family_id
    RETURNING a.next_hash, a.access_jti, r.family_id)
  INSERT INTO refresh_tokens (token_hash, family_id, access_jti)
  SELECT next_hash, family_id, access_jti FROM used RETURNING token_hash`;

async function rotation(label: string, schema: string, insert: string, rotate: string, perStatement: number) {
  const db = await PGlite.create();
  await db.exec(schema);
  const grant = JSON.stringify({
    sub: hex(),
    scopes: ['openid'],
    resource: { uri: 'https://api.example', scopes: ['api:read'] },
    acr: 'urn:x',
    authTime: 1,
    familyIat: 1,
  });
  const current: string[] = [];
  for (let i = 0; i < 20000; i++) {
    current.push(hex());
    await db.query(insert, [current[i], hex(), grant, hex()]);
  }
  const statements = 300;
  let next = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const start = cpuMs();
    for (let s = 0; s < statements; s++) {
      const used: string[] = [];
      const successors: string[] = [];
      const jtis: string[] = [];
      for (let k = 0; k < perStatement; k++, next = (next + 1) % current.length) {
        used.push(current[next]);
        current[next] = hex();
        successors.push(current[next]);
        jtis.push(hex());
      }
      const { rows } = await db.query(rotate, [used, successors, jtis]);
      if (rows.length !== perStatement) throw new Error(`${label}: ${rows.length} of ${perStatement} rotated`);
    }
    const ms = (cpuMs() - start) / (statements * perStatement);
    console.log(`rotation ${label} round ${round}: ${ms.toFixed(3)} ms a rotation (${perStatement} a statement)`);
  }
  await db.close();
}

async function main(): Promise<void> {
  const perStatement = Number(process.env.BENCH_ROTATIONS_PER_STATEMENT ?? 14);
  await rotation(
    '018',
    SCHEMA_018,
    `INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, grant_data, sid, access_jti, expires_at)
     VALUES ($1, $2, 'app', 'user', $3, $4, 'jti', now() + interval '1 day')`,
    ROTATE_018,
    perStatement,
  );
  await rotation(
    '029',
    SCHEMA_029,
    `WITH f AS (INSERT INTO refresh_families (family_id, client_id, user_id, grant_data, sid, expires_at)
       VALUES ($2, 'app', 'user', $3, $4, now() + interval '1 day') RETURNING family_id)
     INSERT INTO refresh_tokens (token_hash, family_id, access_jti) SELECT $1, family_id, 'jti' FROM f`,
    ROTATE_029,
    perStatement,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
