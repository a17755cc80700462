import { Pool, PoolClient, QueryResultRow } from 'pg';
import { errors } from '../errors';
import type { Logger } from '../logger';
import { openEmbedded, type SharedEmbeddedPostgres } from './embedded-postgres';

export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, params?: unknown[]): Promise<R[]>;
}

export interface Db extends Queryable {
  readonly schema: string;
  /** Runs fn inside BEGIN/COMMIT on one connection; ROLLBACK on any error. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** A dedicated connection, for session-level work such as advisory locks. */
  withClient<T>(fn: (client: Queryable) => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url?: string;
  /** Directory for embedded PGlite data; undefined keeps it in memory. */
  embeddedDir?: string;
  schema: string;
  logger: Logger;
  poolSize?: number;
  /** This process's shared embedded Postgres (pnpm start), used instead of one of its own. */
  shared?: SharedEmbeddedPostgres;
}

const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);

/** True when an error means "the database cannot be reached", not "the query is wrong". */
export function isConnectionError(err: unknown): boolean {
  // Duck-typed: errors from another realm (a VM context) are not `instanceof Error`.
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && CONNECTION_ERRORS.has(code)) return true;
  if (err instanceof AggregateError) return err.errors.some(isConnectionError);
  return (
    typeof message === 'string' &&
    /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
      message,
    )
  );
}

function translate(err: unknown): unknown {
  return isConnectionError(err) ? errors.unavailable('database', err) : err;
}

function queryable(run: (text: string, params?: unknown[]) => Promise<{ rows: QueryResultRow[] }>): Queryable {
  return {
    async query<R extends QueryResultRow>(text: string, params?: unknown[]) {
      try {
        return (await run(text, params)).rows as R[];
      } catch (err) {
        throw translate(err);
      }
    },
  };
}

/** The pool, and how to let it go: one of its own, or the shared embedded one. */
async function openPool(options: DatabaseOptions): Promise<{ pool: Pool; release(): Promise<void> }> {
  if (options.shared) return options.shared.acquire();
  if (options.url) {
    // A real server gets a short connection timeout so outages surface as 503s quickly.
    const pool = new Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 3000,
      idleTimeoutMillis: 30000,
    });
    return { pool, release: () => pool.end().catch(() => undefined) };
  }
  const embedded = await openEmbedded(options.embeddedDir, options.logger);
  return { pool: embedded.pool, release: embedded.close };
}

/** Name of each statement marked by preparedStatement(), by its text. */
const statementNames = new Map<string, string>();

/**
 * Marks a statement run on every request of a busy path (a create, a lookup) so that, on the embedded
 * database, each connection parses and plans it once and runs it again by name (a named prepared
 * statement). PGlite runs Postgres's parser and planner in WebAssembly: measured on a one-row INSERT
 * through its socket, the unnamed statement took ~1.0 ms and the same one prepared ~0.4 ms
 * (bench/README.md, "What a payment request's creation costs"). On a real Postgres server statements stay
 * unnamed (parsing is cheap there, and a pooler in transaction mode would not keep them). Returns the
 * text, to be used where it stands: `db.query(preparedStatement('SELECT …'), params)`. The text must
 * not vary (no values spliced in), since each distinct text is kept on each connection for its life.
 * Postgres plans such a statement again when the search_path or a table it reads changes.
 */
export function preparedStatement(text: string): string {
  if (!statementNames.has(text)) statementNames.set(text, `attest_${statementNames.size + 1}`);
  return text;
}

// The schema each connection's search_path points at now. Connections of a shared embedded pool
// serve several services, so it is checked at every checkout (PGlite's socket server ignores startup options).
const searchPathOf = new WeakMap<PoolClient, string>();

export async function createDatabase(options: DatabaseOptions): Promise<Db> {
  const schema = options.schema;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`Invalid schema name: ${schema}`);
  const { pool, release } = await openPool(options);
  // named prepared statements on the embedded database only (see preparedStatement)
  const prepare = !options.url || Boolean(options.shared);
  const run = (client: PoolClient, text: string, params?: unknown[]) => {
    const name = prepare ? statementNames.get(text) : undefined;
    return name ? client.query({ name, text, values: params }) : client.query(text, params);
  };
  pool.on('error', (err) => options.logger.warn('database connection lost', { error: err.message }));
  const checkout = async (): Promise<PoolClient> => {
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw translate(err);
    }
    if (searchPathOf.get(client) !== schema) {
      const fresh = !searchPathOf.has(client);
      if (fresh) client.on('error', () => undefined);
      try {
        // PGlite is one Postgres session whatever connects to it: the statements an earlier connection prepared
        // are still there, and this new connection would prepare them again under the same names
        if (fresh && prepare) await client.query('DEALLOCATE ALL');
        await client.query(`SET search_path TO ${schema}, public`);
      } catch (err) {
        client.release(true);
        throw translate(err);
      }
      searchPathOf.set(client, schema);
    }
    return client;
  };

  const withClient = async <T>(fn: (client: Queryable) => Promise<T>): Promise<T> => {
    const client = await checkout();
    let broken = false;
    // A checked-out client has no pool listener: without this, a server dying between queries crashes the process.
    const onError = () => {
      broken = true;
    };
    client.on('error', onError);
    try {
      return await fn(queryable((text, params) => run(client, text, params)));
    } catch (err) {
      broken = isConnectionError(err) || (err as { code?: string }).code === 'service_unavailable';
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  };

  const base = queryable((text, params) =>
    withClient((client) => client.query(text, params)).then((rows) => ({ rows })),
  );

  return {
    schema,
    query: base.query,
    withClient,
    transaction: (fn) =>
      withClient(async (client) => {
        await client.query('BEGIN');
        try {
          const result = await fn(client);
          await client.query('COMMIT');
          return result;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }),
    async ping() {
      await base.query('SELECT 1');
    },
    async close() {
      await release();
    },
  };
}
