import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { Pool } from 'pg';
import type { Logger } from '../logger';
import { startEmbeddedMaintenance } from './embedded-maintenance';

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

// Postgres's default 128MB of shared buffers, touched over time, is most of PGlite's resident memory;
// local data needs far less (one PGlite measured here: ~730 MB resident by default, ~440 MB with 16MB).
// The data is local files the OS keeps in memory: a page read at random costs about what one read in order
// does (random_page_cost 1.1, as for SSDs, instead of 4), so the planner looks a row up by its index rather
// than reading a small table whole a little sooner as the table grows.
// An analyze (embedded-maintenance.ts) samples 300 rows per unit of default_statistics_target: 30,000 at the
// default 100, which grew a PGlite's memory by ~14 MB for good (WebAssembly memory never shrinks) on an audit
// trail of 200,000 events; 6,000 rows at 20, no growth measured.
const START_PARAMS = [
  ...PGlite.defaultStartParams,
  '-c',
  'shared_buffers=16MB',
  '-c',
  'random_page_cost=1.1',
  '-c',
  'default_statistics_target=20',
];

/**
 * PGlite's WebAssembly is compiled by V8's baseline compiler (Liftoff) only, never tiered up to
 * TurboFan. Measured on Node 20 (bench/README.md, "What the memory profile of `pnpm start` found"): the
 * tier-up of Postgres's hot functions runs on V8's background threads, and the memory those compiles
 * take stays in glibc's per-thread arenas once freed: ~55 MB of the idle `pnpm start`, ~40 MB of a
 * bare PGlite opened and queried. Liftoff's code served the same inserts and lookups as fast (the SQL
 * a request runs is a small share of its time next to PGlite's own JavaScript and I/O), and the bench's
 * database-bound rows did not move. The flag is V8's and process-wide, read when a WebAssembly module
 * is compiled: it is set before the first PGlite is made, and every module compiled after it (undici's
 * HTTP parser, at fetch's first use) runs on Liftoff too. Only processes that embed Postgres set it.
 */
let liftoffOnly = false;
function compileWasmWithBaselineOnly(): void {
  if (liftoffOnly) return;
  liftoffOnly = true;
  v8.setFlagsFromString('--liftoff-only');
}

/** Creates a data directory in a process of its own, which exits when done (see startEmbeddedPostgres). */
const INITIALIZE = `
process.stdout.write('running');
const [entry, dir, params] = process.argv.slice(1);
require(entry).PGlite.create(dir, { startParams: JSON.parse(params) })
  .then((db) => db.close())
  .then(() => process.exit(0), (err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); });
`;

/** Whether dataDir already holds a Postgres data directory (initdb writes PG_VERSION first). */
const isInitializedDataDir = (dataDir: string) => fs.existsSync(path.join(dataDir, 'PG_VERSION'));

/**
 * How often a creation killed before its program ran is begun again. A child leaves its parent's process
 * group (setsid) only after fork, with every signal blocked until just before exec: a signal sent to the
 * parent's group in that window (a Ctrl-C as the start begins) stays pending in the child and, its handlers
 * reset to the default, kills it before our program runs. Nothing was created then, so it is safe to begin
 * again; a creation killed while it runs is not retried (someone meant it). Under a barrage of SIGINT to
 * the group, one a millisecond, ~40 % of such children died before exec here: 20 attempts make a start
 * that fails that way unheard of, and a barrage that never ends cannot keep the start-up looping.
 */
const INITDB_ATTEMPTS = 20;

async function runInitdb(dir: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await runInitdbOnce(dir);
    if (outcome.code === 0) return;
    if (outcome.signal && !outcome.ran && attempt < INITDB_ATTEMPTS) continue;
    const cause = outcome.signal ? `killed by ${outcome.signal}` : `exit code ${outcome.code}`;
    throw new Error(
      `could not create the embedded database in ${dir} (${cause})${outcome.stderr ? `: ${outcome.stderr}` : ''}`,
    );
  }
}

interface InitdbOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Whether the child's program began (it says so first): a child killed before it did created nothing. */
  ran: boolean;
  stderr: string;
}

async function runInitdbOnce(dir: string): Promise<InitdbOutcome> {
  const child = spawn(
    process.execPath,
    ['-e', INITIALIZE, require.resolve('@electric-sql/pglite'), dir, JSON.stringify(START_PARAMS)],
    // in a process group of its own: a Ctrl-C to the terminal's group does not cut it off half-way; the
    // program that started it decides (pnpm start lets the start-up finish, then stops in order)
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let stderr = '';
  let ran = false;
  child.stdout.once('data', () => (ran = true));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // 'close', not 'exit': the child's output has been read to its end
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c: number | null, s: NodeJS.Signals | null) => resolve([c, s]));
  });
  return { code, signal, ran, stderr: stderr.trim() };
}

/**
 * Creates the data directory beside dataDir and moves it into place when complete, so a start
 * interrupted half-way leaves no half-made database behind (the next start begins again).
 */
async function initializeDataDir(dataDir: string): Promise<void> {
  if (fs.readdirSync(dataDir).length > 0) return runInitdb(dataDir);
  const staging = `${dataDir}.initializing`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { mode: 0o700 });
  await runInitdb(staging);
  fs.rmdirSync(dataDir);
  fs.renameSync(staging, dataDir);
}

/**
 * Where the embedded database listens: a unix socket in a directory of this process's own (mode 0700, made
 * by mkdtemp), so only this user's programs can reach it; PGlite asks no password, and on a loopback port
 * any local program could. A unix socket also costs less per statement than TCP on loopback (a `SELECT 1`
 * through the pool: ~0.13 against ~0.17 ms of CPU here; bench/README.md, "The embedded database on a unix
 * socket"). The directory is under the system's temporary directory, not DATA_DIR: a socket's path has at
 * most 107 bytes. Windows has no unix sockets for `pg`, so there it stays on loopback.
 */
function socketDirectory(parent = os.tmpdir()): string | null {
  if (process.platform === 'win32') return null;
  const base = parent.length <= 64 ? parent : '/tmp';
  try {
    return fs.mkdtempSync(path.join(base, 'attest-pg-'));
  } catch (err) {
    throw new Error(
      `could not make the embedded database's socket directory in ${base} (set TMPDIR to a writable directory): ${(err as Error).message}`,
    );
  }
}

/**
 * Socket directories of databases not yet stopped: removed when the process exits without stopping them (a
 * start that failed half-way, process.exit), as far as an exit handler can (not after SIGKILL).
 */
const openSocketDirs = new Set<string>();
let exitHandlerSet = false;

function removeSocketDir(dir: string): void {
  openSocketDirs.delete(dir);
  fs.rmSync(dir, { recursive: true, force: true });
}

function removeAtExit(dir: string): void {
  openSocketDirs.add(dir);
  if (exitHandlerSet) return;
  exitHandlerSet = true;
  process.once('exit', () => {
    for (const open of [...openSocketDirs]) removeSocketDir(open);
  });
}

/** pg finds the socket of a host that is a directory at `<dir>/.s.PGSQL.<port>`, the port 5432 by default. */
const SOCKET_FILE = '.s.PGSQL.5432';

export interface EmbeddedPostgresOptions {
  /** Where the socket's own directory is made (default: the system's temporary directory). */
  socketParent?: string;
}

/**
 * Real Postgres (PGlite, WebAssembly) behind a socket so plain `pg` code talks to it (socketDirectory).
 * A new data directory is created (initdb) in a short-lived child process: initdb grows PGlite's
 * WebAssembly memory to ~700 MB, which a process never gives back, while opening an existing
 * directory needs ~150 MB. So a first `pnpm start` is as lean as every later one.
 */
export async function startEmbeddedPostgres(
  dataDir?: string,
  options: EmbeddedPostgresOptions = {},
): Promise<EmbeddedPostgres> {
  if (dataDir) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (!isInitializedDataDir(dataDir)) await initializeDataDir(dataDir);
  }
  const socketDir = socketDirectory(options.socketParent);
  if (socketDir) removeAtExit(socketDir);
  compileWasmWithBaselineOnly();
  let db: PGlite | undefined;
  try {
    db = await PGlite.create(dataDir, { startParams: START_PARAMS });
    const server = socketDir
      ? new PGLiteSocketServer({ db, path: path.join(socketDir, SOCKET_FILE), maxConnections: 1 })
      : new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
    await server.start();
    const url = socketDir
      ? `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`
      : `postgres://postgres@127.0.0.1:${server.getServerConn().split(':').pop()}/postgres`;
    const opened = db;
    return {
      url,
      async stop() {
        await server.stop().catch(() => undefined);
        await opened.close().catch(() => undefined);
        if (socketDir) removeSocketDir(socketDir);
      },
    };
  } catch (err) {
    await db?.close().catch(() => undefined);
    if (socketDir) removeSocketDir(socketDir);
    throw err;
  }
}

/** The pool for an embedded Postgres: one connection, since PGlite is one session. */
export function embeddedPool(url: string): Pool {
  return new Pool({
    connectionString: url,
    max: 1,
    // In-process PGlite shares this event loop: under load a connection can wait on other work, which is not an outage.
    connectionTimeoutMillis: 30000,
    idleTimeoutMillis: 0,
  });
}

/**
 * An embedded Postgres, its pool, and the upkeep a server's autovacuum would do (embedded-maintenance.ts); a
 * failed upkeep pass is logged and tried again at the next interval.
 */
export async function openEmbedded(
  dataDir: string | undefined,
  logger?: Logger,
): Promise<{ pool: Pool; close(): Promise<void> }> {
  const server = await startEmbeddedPostgres(dataDir);
  const pool = embeddedPool(server.url);
  const maintenance = startEmbeddedMaintenance(pool, {
    onError: (err) => logger?.warn('embedded database upkeep (vacuum, analyze) failed', { error: err.message }),
  });
  return {
    pool,
    async close() {
      await maintenance.stop().catch(() => undefined);
      await pool.end().catch(() => undefined);
      await server.stop();
    },
  };
}

/**
 * One embedded Postgres, and its one connection, for every service of one process (`pnpm start`):
 * each service keeps its own schema and migrations. Started at the first acquire, stopped when the
 * last user releases it.
 */
export class SharedEmbeddedPostgres {
  private opened?: Promise<{ pool: Pool; close(): Promise<void> }>;
  private users = 0;

  constructor(
    readonly dir: string,
    private readonly logger?: Logger,
  ) {}

  async acquire(): Promise<{ pool: Pool; release(): Promise<void> }> {
    this.users++;
    this.opened ??= openEmbedded(this.dir, this.logger);
    let opened: { pool: Pool; close(): Promise<void> };
    try {
      opened = await this.opened;
    } catch (err) {
      await this.release();
      throw err;
    }
    let released = false;
    return {
      pool: opened.pool,
      release: async () => {
        if (released) return;
        released = true;
        await this.release();
      },
    };
  }

  private async release(): Promise<void> {
    if (--this.users > 0) return;
    const opened = this.opened;
    this.opened = undefined;
    const ready = await opened?.catch(() => undefined);
    if (!ready) return;
    await ready.close();
  }
}
