import type { Pool } from 'pg';
import { startEmbeddedMaintenance } from '../src/db';
import { eventually, valueWithin } from './support';
import { embeddedPool, startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded-postgres';

jest.setTimeout(120000);

// Marks the rows named by an array and adds their successors, as identity's batched refresh-token rotation does
const ROTATE = {
  name: 'rotate',
  text: `WITH used AS (
      UPDATE t SET used_at = now() FROM unnest($1::text[], $2::text[]) AS a(id, next), f
      WHERE t.id = a.id AND t.used_at IS NULL AND f.id = t.family
      RETURNING a.next, t.family
    )
    INSERT INTO t (id, family) SELECT next, family FROM used`,
};

describe('the embedded database keeps its tables as autovacuum would (PGlite has no autovacuum)', () => {
  let server: EmbeddedPostgres;
  let pool: Pool;
  beforeAll(async () => {
    server = await startEmbeddedPostgres();
    pool = embeddedPool(server.url);
  });
  afterAll(async () => {
    await pool.end();
    await server.stop();
  });

  const stat = async (table: string, counter: 'n_dead_tup' | 'n_mod_since_analyze') =>
    Number(
      (await pool.query<{ n: string }>(`SELECT ${counter} AS n FROM pg_stat_user_tables WHERE relname = $1`, [table]))
        .rows[0].n,
    );

  const plan = async () => {
    const client = await pool.connect();
    try {
      const rows = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE rotate('{a}', '{b}')`)).rows;
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      client.release();
    }
  };

  it('analyzes a table that grew, so a statement prepared when it was small is planned again (an index scan)', async () => {
    // the embedded database prices a page read at random near one read in order (its files are in memory)
    expect((await pool.query<{ random_page_cost: string }>('SHOW random_page_cost')).rows[0].random_page_cost).toBe(
      '1.1',
    );
    // with Postgres's default (4) a small table is read whole rather than through its index: a plan that does so
    // is what a table's growth leaves stale here (with 1.1 the same happens to other statements, at other sizes)
    await pool.query('SET random_page_cost = 4');
    await pool.query('CREATE TABLE f (id text PRIMARY KEY)');
    await pool.query('CREATE TABLE t (id text PRIMARY KEY, family text NOT NULL, used_at timestamptz)');
    await pool.query('CREATE TABLE quiet (id int)');
    await pool.query(`INSERT INTO f VALUES ('f')`);
    await pool.query(`INSERT INTO t SELECT 'k' || i, 'f' FROM generate_series(1, 24) i`);
    await pool.query('INSERT INTO quiet SELECT generate_series(1, 10)');
    const client = await pool.connect();
    try {
      // after five runs of a prepared statement Postgres makes a generic plan, kept if no costlier than theirs
      for (let i = 0; i < 8; i++) {
        const ids = [1, 2, 3].map((j) => `${3 * i + j}`);
        await client.query({ ...ROTATE, values: [ids.map((id) => `k${id}`), ids.map((id) => `n${id}`)] });
      }
    } finally {
      client.release();
    }
    await pool.query(`INSERT INTO t SELECT 'm' || i, 'f' FROM generate_series(1, 20000) i`);
    // the plan made for a few rows stays: every row of t is read at each use
    expect(await plan()).toMatch(/Seq Scan on t/);

    // the counters reach the statistics within a second or so
    await eventually(async () => expect(await stat('t', 'n_mod_since_analyze')).toBeGreaterThanOrEqual(20000));
    const maintenance = startEmbeddedMaintenance(pool, { intervalMs: 3_600_000 });
    try {
      const done = await maintenance.run();
      expect(done.analyzed).toContain('public.t');
      // 24 rows updated (24 dead): under the vacuum threshold (50 + 20 %); inserts alone are not vacuumed
      expect(done.vacuumed).toEqual([]);
      // the small table with 10 changes is under autovacuum's thresholds: left alone
      expect(done.analyzed).not.toContain('public.quiet');

      const after = await plan();
      expect(after).toMatch(/Index Scan using t_pkey on t/);
      expect(after).not.toMatch(/Seq Scan on t/);
      const [stats] = (
        await pool.query<{ last_analyze: Date | null; last_vacuum: Date | null; n_mod_since_analyze: string }>(
          "SELECT last_analyze, last_vacuum, n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 't'",
        )
      ).rows;
      expect(stats.last_analyze).toBeInstanceOf(Date);
      expect(stats.last_vacuum).toBeNull();
      expect(Number(stats.n_mod_since_analyze)).toBe(0);
      const [{ reltuples }] = (
        await pool.query<{ reltuples: number }>("SELECT reltuples FROM pg_class WHERE relname = 't'")
      ).rows;
      expect(reltuples).toBe(20048);

      // a second pass finds nothing to do
      expect(await maintenance.run()).toEqual({ vacuumed: [], analyzed: [] });
    } finally {
      await maintenance.stop();
    }
  });

  it('vacuums a table whose deleted rows pass the threshold, on its own timer', async () => {
    await pool.query('CREATE TABLE d (id int PRIMARY KEY)');
    await pool.query('INSERT INTO d SELECT generate_series(1, 500)');
    const first = startEmbeddedMaintenance(pool, { intervalMs: 3_600_000 });
    await first.run();
    await first.stop();
    await pool.query('DELETE FROM d WHERE id <= 300');
    const dead = () => stat('d', 'n_dead_tup');
    // the counters reach the statistics within a second or so
    expect(await valueWithin(20_000, dead, 300)).toBe(300);
    const maintenance = startEmbeddedMaintenance(pool, { intervalMs: 200 });
    try {
      expect(await valueWithin(20_000, dead, 0)).toBe(0);
      const [{ n }] = (await pool.query<{ n: string }>('SELECT count(*) AS n FROM d')).rows;
      expect(n).toBe('200');
    } finally {
      await maintenance.stop();
    }
  });
});
