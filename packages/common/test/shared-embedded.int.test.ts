import childProcess from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, embeddedLayout, SharedEmbeddedPostgres } from '../src/db';
import { testLogger } from './support';

// each embedded Postgres takes seconds to start, many more on a loaded machine
jest.setTimeout(120000);

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'attest-shared-'));

describe('one embedded Postgres shared by the services of one process', () => {
  it('keeps each service in its own schema on the one connection, and keeps the data after the last close', async () => {
    const dir = path.join(tmp(), 'pg');
    const shared = new SharedEmbeddedPostgres(dir);
    const [a, b] = await Promise.all(
      ['svc_a', 'svc_b'].map((schema) => createDatabase({ schema, logger: testLogger, shared })),
    );
    for (const [db, value] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      await db.query(`CREATE SCHEMA IF NOT EXISTS ${db.schema}`);
      await db.withClient(async (c) => {
        await c.query(`CREATE TABLE ${db.schema}.t (v text)`);
        await c.query(`INSERT INTO ${db.schema}.t VALUES ($1)`, [value]);
      });
    }
    // unqualified names resolve in each service's own schema, however the calls interleave
    const read = async (db: typeof a) => (await db.query<{ v: string }>('SELECT v FROM t'))[0].v;
    expect(await Promise.all([read(a), read(b), read(a), read(b)])).toEqual(['a', 'b', 'a', 'b']);
    const inTx = a.transaction(async (tx) => {
      await tx.query("INSERT INTO t VALUES ('a2')");
      return (await tx.query<{ n: string }>('SELECT count(*) AS n FROM t'))[0].n;
    });
    expect(await Promise.all([inTx, read(b)])).toEqual(['2', 'b']);
    await a.close();
    expect(await read(b)).toBe('b');
    await b.close();

    const again = await createDatabase({
      schema: 'svc_a',
      logger: testLogger,
      shared: new SharedEmbeddedPostgres(dir),
    });
    expect((await again.query<{ v: string }>('SELECT v FROM t ORDER BY v')).map((r) => r.v)).toEqual(['a', 'a2']);
    await again.close();
  }, 60000);
});

describe('a new embedded data directory', () => {
  it('is created by a child process beside it and moved into place; a later start opens it in process', async () => {
    const dir = path.join(tmp(), 'pg');
    // a start interrupted earlier left a half-made directory behind: it is thrown away
    fs.mkdirSync(`${dir}.initializing`);
    fs.writeFileSync(path.join(`${dir}.initializing`, 'PG_VERSION'), 'half-made');
    const spawned = jest.spyOn(childProcess, 'spawn');
    try {
      const first = await createDatabase({
        schema: 'svc_a',
        logger: testLogger,
        shared: new SharedEmbeddedPostgres(dir),
      });
      expect(spawned).toHaveBeenCalledTimes(1);
      expect(spawned.mock.calls[0][0]).toBe(process.execPath);
      expect(spawned.mock.calls[0][1]).toEqual(expect.arrayContaining([`${dir}.initializing`]));
      expect(fs.existsSync(`${dir}.initializing`)).toBe(false);
      expect(fs.readFileSync(path.join(dir, 'PG_VERSION'), 'utf8').trim()).toMatch(/^\d+$/);
      await first.query('CREATE TABLE kept (v text)');
      await first.query("INSERT INTO kept VALUES ('x')");
      await first.close();

      const second = await createDatabase({
        schema: 'svc_a',
        logger: testLogger,
        shared: new SharedEmbeddedPostgres(dir),
      });
      expect(spawned).toHaveBeenCalledTimes(1);
      expect(await second.query<{ v: string }>('SELECT v FROM kept')).toEqual([{ v: 'x' }]);
      await second.close();
    } finally {
      spawned.mockRestore();
    }
  });
});

describe('a creation of the embedded database cut off by a signal', () => {
  const realSpawn = childProcess.spawn;
  /** The next creation's child gets `signal`: at once (before its program runs), or once it says it runs. */
  const signalNextChild = (signal: NodeJS.Signals, when: 'before it runs' | 'while it runs') =>
    jest.spyOn(childProcess, 'spawn').mockImplementationOnce(((...args: Parameters<typeof realSpawn>) => {
      const child = realSpawn(...args);
      if (when === 'before it runs') child.kill(signal);
      else child.stdout!.once('data', () => child.kill(signal));
      return child;
    }) as typeof realSpawn);

  it('is begun again when the signal killed the child before its program ran (a Ctrl-C as it forked)', async () => {
    const dir = path.join(tmp(), 'pg');
    const spawned = signalNextChild('SIGINT', 'before it runs');
    try {
      const db = await createDatabase({ schema: 'svc_a', logger: testLogger, shared: new SharedEmbeddedPostgres(dir) });
      expect(spawned).toHaveBeenCalledTimes(2);
      expect(spawned.mock.calls[1][1]).toEqual(spawned.mock.calls[0][1]);
      expect(fs.readFileSync(path.join(dir, 'PG_VERSION'), 'utf8').trim()).toMatch(/^\d+$/);
      expect(fs.existsSync(`${dir}.initializing`)).toBe(false);
      expect(await db.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      await db.close();
    } finally {
      spawned.mockRestore();
    }
  });

  it('fails, naming the signal, when the child was killed while it created the database; the next start begins again', async () => {
    const dir = path.join(tmp(), 'pg');
    const spawned = signalNextChild('SIGTERM', 'while it runs');
    try {
      await expect(
        createDatabase({ schema: 'svc_a', logger: testLogger, shared: new SharedEmbeddedPostgres(dir) }),
      ).rejects.toThrow(`could not create the embedded database in ${dir}.initializing (killed by SIGTERM)`);
      expect(spawned).toHaveBeenCalledTimes(1);
      expect(fs.existsSync(path.join(dir, 'PG_VERSION'))).toBe(false);
      const db = await createDatabase({ schema: 'svc_a', logger: testLogger, shared: new SharedEmbeddedPostgres(dir) });
      expect(spawned).toHaveBeenCalledTimes(2);
      expect(fs.existsSync(path.join(dir, 'PG_VERSION'))).toBe(true);
      await db.close();
    } finally {
      spawned.mockRestore();
    }
  });
});

describe('embeddedLayout', () => {
  const services = ['identity', 'transactions', 'prices'];

  it('is one shared database in DATA_DIR/pg for a new data directory', () => {
    const dataDir = tmp();
    expect(embeddedLayout(dataDir, services)).toEqual({ kind: 'shared', dir: path.join(dataDir, 'pg') });
  });

  it('keeps the per-service databases an earlier version left, unless a shared one exists', () => {
    const dataDir = tmp();
    fs.mkdirSync(path.join(dataDir, 'identity', 'pg'), { recursive: true });
    fs.mkdirSync(path.join(dataDir, 'prices', 'pg'), { recursive: true });
    expect(embeddedLayout(dataDir, services)).toEqual({
      kind: 'per-service',
      found: [path.join(dataDir, 'identity', 'pg'), path.join(dataDir, 'prices', 'pg')],
    });
    fs.mkdirSync(path.join(dataDir, 'pg'));
    expect(embeddedLayout(dataDir, services)).toEqual({ kind: 'shared', dir: path.join(dataDir, 'pg') });
  });
});
