import type { Pool } from 'pg';

/**
 * What Postgres's autovacuum does, for the embedded database. PGlite is Postgres in one session, with no
 * background workers: nothing vacuums or analyzes its tables unless asked. Without it a table's statistics stay
 * those of the day it was created (empty), and the plan a prepared statement cached then (a sequential scan of
 * a table of a few rows) is never made again: measured in the bench's refresh row, the batched rotation read
 * every row of refresh_tokens at each use (25 million rows read in 40 s), and the row's rate fell from one
 * repetition to the next. Deleted and updated rows' space is not reused either, and the transaction ids are
 * never frozen.
 *
 * So every `intervalMs` the tables are checked as autovacuum checks them (with its default thresholds, but for
 * analyze: see TABLES_DUE), and each table over one is vacuumed and/or analyzed, one table per statement: a
 * vacuum or analyze updates the table's statistics and makes Postgres plan again the statements that read it.
 * The work goes through the pool, whose one connection is PGlite's one session: it waits for the statement or
 * transaction in progress, and requests wait for it in turn (an analyze of the bench's audit trail took up to
 * 275 ms; nothing is vacuumed or analyzed more than once per interval).
 */
export interface EmbeddedMaintenance {
  /** One pass now: the tables vacuumed and analyzed (schema-qualified). */
  run(): Promise<{ vacuumed: string[]; analyzed: string[] }>;
  stop(): Promise<void>;
}

/**
 * autovacuum_naptime is 60 s on a server, whose statements are not kept prepared. Here a check is one catalog
 * query (~3 ms of CPU with 60 tables, measured in PGlite), and a table that grows from empty (a new deployment's
 * busiest table) gets statistics that fit it before its prepared statements' plans cost much: in the bench's
 * refresh row, refresh_tokens grows by ~2,500 rows a second, and a plan made at 1,000 rows still read the whole
 * table at each rotation until the next analyze (10 s later with a 10-s interval).
 */
const MAINTENANCE_INTERVAL_MS = 2_000;

// autovacuum's defaults (PostgreSQL 17) for vacuum: autovacuum_vacuum_threshold 50 + scale_factor 0.2 of the
// rows, and autovacuum_freeze_max_age 200 million transactions. reltuples is -1 for a table never vacuumed nor
// analyzed. Unlike autovacuum, whose work runs beside the sessions, this runs in the one session, so two of its
// habits are left out:
// - An analyze when the changes since the last one pass 50 + the table's rows (it doubled, or changed as much),
//   not 50 + 10 %: an analyze reads up to 30,000 rows, so at 10 % a table growing from empty costs up to ~10 rows
//   read per row written, in the session requests wait for (in the bench's token-exchange row the audit trail's
//   analyses took 26, 117 and 275 ms as it doubled). Between analyses the planner still scales a table's row
//   count with its size on disk; what an analyze adds (distinct values, common values) changes little in one
//   doubling.
// - No vacuum after inserts alone (autovacuum_vacuum_insert_threshold), which marks pages all-visible for
//   index-only scans: work on the request path for every 20 % an append-only table (the audit trail) grows;
//   freezing is asked by age.
const TABLES_DUE = `
  SELECT format('%I.%I', s.schemaname, s.relname) AS name,
         (s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0) OR age(c.relfrozenxid) > 200000000) AS vacuum,
         s.n_mod_since_analyze > 50 + greatest(c.reltuples, 0) AS analyze
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
  WHERE s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0)
     OR age(c.relfrozenxid) > 200000000
     OR s.n_mod_since_analyze > 50 + greatest(c.reltuples, 0)
  ORDER BY s.n_dead_tup + s.n_mod_since_analyze DESC`;

export function startEmbeddedMaintenance(
  pool: Pool,
  options: { intervalMs?: number; onError?: (err: Error) => void } = {},
): EmbeddedMaintenance {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();

  const pass = async () => {
    const vacuumed: string[] = [];
    const analyzed: string[] = [];
    const { rows } = await pool.query<{ name: string; vacuum: boolean; analyze: boolean }>(TABLES_DUE);
    for (const table of rows) {
      if (stopped) break;
      // the name comes from format('%I.%I'): quoted as an identifier by Postgres
      if (table.vacuum) {
        await pool.query(`VACUUM ${table.analyze ? '(ANALYZE) ' : ''}${table.name}`);
        vacuumed.push(table.name);
      } else {
        await pool.query(`ANALYZE ${table.name}`);
      }
      if (table.analyze) analyzed.push(table.name);
    }
    return { vacuumed, analyzed };
  };
  // one pass at a time, whether from the timer or run()
  let passes = 0;
  const run = () => {
    passes++;
    const next = running.then(pass, pass).finally(() => passes--);
    running = next.catch(() => undefined);
    return next;
  };

  const timer = setInterval(() => {
    // a pass still under way (a long vacuum) is not followed by another at once
    if (passes > 0) return;
    run().catch((err: Error) => {
      if (!stopped) options.onError?.(err);
    });
  }, options.intervalMs ?? MAINTENANCE_INTERVAL_MS);
  timer.unref();

  return {
    run,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
