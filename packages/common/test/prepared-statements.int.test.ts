import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, preparedStatement, SharedEmbeddedPostgres } from '../src/db';
import { testLogger } from './support';

// each embedded Postgres takes seconds to start, many more on a loaded machine
jest.setTimeout(120000);

/** A connection error as node-postgres reports one: the pool drops that connection and opens a new one. */
const connectionLost = () => Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });

describe('named prepared statements on the embedded database (preparedStatement)', () => {
  it('answers as the unnamed statement does, in each schema, and again on a new connection to the same PGlite', async () => {
    const shared = new SharedEmbeddedPostgres(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attest-prep-')), 'pg'));
    const [a, b] = await Promise.all(
      ['prep_a', 'prep_b'].map((schema) => createDatabase({ schema, logger: testLogger, shared })),
    );
    try {
      for (const [db, value] of [
        [a, 'a'],
        [b, 'b'],
      ] as const) {
        await db.query(`CREATE SCHEMA IF NOT EXISTS ${db.schema}`);
        await db.query(`CREATE TABLE ${db.schema}.t (k int PRIMARY KEY, v text)`);
        await db.query(`INSERT INTO ${db.schema}.t VALUES (1, $1)`, [value]);
      }
      const text = preparedStatement('SELECT v FROM t WHERE k = $1');
      const read = async (db: typeof a) => (await db.query<{ v: string }>(text, [1]))[0]?.v;
      // one statement text, two schemas on the one connection: each reads its own table
      expect(await Promise.all([read(a), read(b), read(a), read(b)])).toEqual(['a', 'b', 'a', 'b']);
      expect(await a.transaction((tx) => tx.query<{ v: string }>(text, [1]))).toEqual([{ v: 'a' }]);
      // the connection is dropped; PGlite's one session still holds the statement the old connection prepared
      await expect(
        a.withClient(() => {
          throw connectionLost();
        }),
      ).rejects.toThrow('Connection terminated');
      // the socket server takes the new connection once the old one is closed: until then, 503 (only that)
      const again = async (): Promise<string | undefined> => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await read(a);
          } catch (err) {
            if ((err as { code?: string }).code !== 'service_unavailable' || attempt >= 50) throw err;
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
        }
      };
      expect(await again()).toBe('a');
      expect(await read(b)).toBe('b');
    } finally {
      await a.close();
      await b.close();
    }
  });
});
