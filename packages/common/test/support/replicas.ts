import type { Db, Queryable } from '../../src/db';
import type { InvalidationBus } from '../../src/cache';
import { randomHex, testBus, type TestStorage, type TestStorageOptions } from './index';

/**
 * The database with `before` run ahead of every statement (on the pool, in a transaction, on a dedicated
 * client): to count statements, or to delay some of them.
 */
export function interceptedDb(db: Db, before: (text: string) => void | Promise<void>): Db {
  const intercept = (q: Queryable): Queryable => ({
    // a synchronous `before` adds no turn: the statement is sent as it would be without it
    query: (text, params) => {
      const wait = before(text);
      return wait ? wait.then(() => q.query(text, params)) : q.query(text, params);
    },
  });
  return {
    ...db,
    schema: db.schema,
    query: intercept(db).query,
    transaction: (fn) => db.transaction((tx) => fn(intercept(tx))),
    withClient: (fn) => db.withClient((client) => fn(intercept(client))),
  };
}

/** Counts the statements an app sends to its database. */
export function countingDb(db: Db): { db: Db; statements: string[] } {
  const statements: string[] = [];
  return { statements, db: interceptedDb(db, (text) => void statements.push(text)) };
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
