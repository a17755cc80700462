import type { Db, Queryable } from '../../src/db';
import type { InvalidationBus } from '../../src/cache';
import { randomHex, testBus, type TestStorage, type TestStorageOptions } from './index';

/** Counts the statements an app sends to its database. */
export function countingDb(db: Db): { db: Db; statements: string[] } {
  const statements: string[] = [];
  const count = (q: Queryable): Queryable => ({
    query: (text, params) => {
      statements.push(text);
      return q.query(text, params);
    },
  });
  return {
    statements,
    db: {
      ...db,
      schema: db.schema,
      query: count(db).query,
      transaction: (fn) => db.transaction((tx) => fn(count(tx))),
      withClient: (fn) => db.withClient((client) => fn(count(client))),
    },
  };
}

export interface Replicas<H> {
  a: H;
  b: H;
  /** Closes b, b's bus, a's bus, then a. */
  close(): Promise<void>;
}

/**
 * Two instances of a service sharing the database and the invalidation bus, as two replicas do: `a` on
 * fresh storage with a bus on channels of its own; `b` on a's database and, with Redis, a second connection
 * on the same channels, as another replica has (without Redis: the same in-process bus).
 * `start` builds one instance on the storage given (`which` says which of the two it is).
 */
export async function replicaPair<H extends { storage: TestStorage; close(): Promise<void> }>(
  service: string,
  start: (shared: TestStorageOptions, which: 'a' | 'b') => Promise<H>,
): Promise<Replicas<H>> {
  const prefix = `test:${service}:${randomHex(5)}:`;
  const a = await start({ bus: testBus(service, prefix) }, 'a');
  const bBus: InvalidationBus | undefined = process.env.TEST_REDIS_URL ? testBus(service, prefix) : undefined;
  const b = await start({ db: a.storage.db, bus: bBus ?? a.storage.bus }, 'b');
  return {
    a,
    b,
    async close() {
      await b.close();
      await bBus?.close();
      await a.storage.bus.close();
      await a.close();
    },
  };
}
