import path from 'node:path';
import request from 'supertest';
import { MemoryBus, type Db } from '@attest/common';
import {
  countingDb,
  interceptedDb,
  randomHex,
  replicaPair,
  testDatabase,
  valueWithin,
  type Replicas,
} from '@attest/testing';
import { LastUseRecorder } from '../src/kernel/api-keys/last-use';
import { TransactionService } from '../src/transactions/transaction-service';
import { apiKeyFor, newAppId, recordTransaction, transactionsHarness, type TransactionsHarness } from './support';

// each embedded Postgres takes seconds to start, many more on a loaded machine
jest.setTimeout(120000);

/** Polls up to 1 s for the expected value; returns the last one seen. */
const within1s = <T>(read: () => Promise<T>, expected: T) => valueWithin(1000, read, expected);

/**
 * The database as one across a network, for reads of transactions by id: each answers after 100 ms. Lookups
 * sent together reach the server over a few milliseconds; the embedded database answers a read in well under
 * one, so without this each could be read before the next arrives, and nothing would arrive "together".
 */
const slowTransactionReads = (db: Db): Db =>
  interceptedDb(db, async (text) => {
    if (/FROM transactions WHERE id/.test(text)) await new Promise((r) => setTimeout(r, 100));
  });

const lookup = (h: TransactionsHarness, id: string, appId: string, apiKey: string) =>
  request(h.publicApp)
    .get(`/api/v2/client/transaction/${id}`)
    .query({ app_id: appId, type: 'pay' })
    .set('Authorization', `Bearer ${apiKey}`);

describe('transaction lookups from memory', () => {
  let h: TransactionsHarness;
  let db: Db;
  let counted: ReturnType<typeof countingDb>;
  beforeAll(async () => {
    db = await testDatabase('transactions', path.join(__dirname, '..', 'migrations'));
    counted = countingDb(db);
    h = await transactionsHarness({}, { db: counted.db });
  });
  afterAll(async () => {
    await h.close();
    await db.close();
  });

  it('a warm lookup reads nothing from the database, and records the key use once', async () => {
    const appId = newAppId();
    const key = await apiKeyFor(h, appId);
    const tx = await recordTransaction(h, appId);
    expect((await lookup(h, tx.transaction_id, appId, key.api_key)).status).toBe(200);
    await new Promise((r) => setImmediate(r));
    counted.statements.length = 0;
    for (let i = 0; i < 5; i++) {
      const res = await lookup(h, tx.transaction_id, appId, key.api_key);
      expect(res.status).toBe(200);
      expect(res.body.transaction_status).toBe('pending');
    }
    expect(counted.statements).toEqual([]);
    const [row] = await counted.db.query<{ last_used_at: Date | null }>(
      'SELECT last_used_at FROM api_keys WHERE id = $1',
      [key.key_id],
    );
    expect(row.last_used_at).not.toBeNull();
  });

  it('cold lookups that arrive together are read in batches, each answered with its own transaction', async () => {
    const appId = newAppId();
    const key = await apiKeyFor(h, appId);
    const recorded = [];
    for (let i = 0; i < 12; i++) recorded.push(await recordTransaction(h, appId));
    // recording fills this process's cache: a second instance on the same database starts cold
    const cold = await transactionsHarness({}, { db: slowTransactionReads(counted.db) });
    try {
      await lookup(cold, `0x${randomHex(32)}`, appId, key.api_key); // warms the key
      counted.statements.length = 0;
      const unknown = `0x${randomHex(32)}`;
      const answers = await Promise.all([
        ...recorded.map((tx) => lookup(cold, tx.transaction_id, appId, key.api_key)),
        lookup(cold, unknown, appId, key.api_key),
      ]);
      expect(answers.slice(0, -1).map((r) => [r.status, r.body.reference])).toEqual(
        recorded.map((tx) => [200, tx.reference]),
      );
      expect(answers[answers.length - 1].status).toBe(404);
      const reads = counted.statements.filter((s) => /FROM transactions WHERE id/.test(s));
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.length).toBeLessThan(recorded.length + 1);
      expect(reads.every((s) => s.includes('= ANY('))).toBe(true);
    } finally {
      await cold.close();
    }
  });

  it('an unknown id is remembered as absent, and a status change shows at the next lookup', async () => {
    const appId = newAppId();
    const key = await apiKeyFor(h, appId);
    const unknown = `0x${randomHex(32)}`;
    expect((await lookup(h, unknown, appId, key.api_key)).status).toBe(404);
    counted.statements.length = 0;
    expect((await lookup(h, unknown, appId, key.api_key)).status).toBe(404);
    expect(counted.statements).toEqual([]);
    const tx = await recordTransaction(h, appId);
    expect((await lookup(h, tx.transaction_id, appId, key.api_key)).body.transaction_status).toBe('pending');
    await h.admin('post', `/transactions/${tx.transaction_id}/status`).send({ status: 'failed' }).expect(200);
    const after = await lookup(h, tx.transaction_id, appId, key.api_key);
    expect(after.body.transaction_status).toBe('failed');
    const [row] = await counted.db.query<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [
      tx.transaction_id,
    ]);
    expect(row.status).toBe('failed');
  });

  it('keeps at most `max` transactions in memory: past it, the oldest loaded is read again', async () => {
    const appId = newAppId();
    const recorded = [];
    for (let i = 0; i < 4; i++) recorded.push(await recordTransaction(h, appId));
    const ids = recorded.map((tx) => tx.transaction_id);
    const service = new TransactionService(counted.db, new MemoryBus(), { cache: { ttlMs: 60000, max: 3 } });
    const reads = () => counted.statements.filter((s) => /FROM transactions WHERE id/.test(s)).length;
    for (const id of ids) expect((await service.get(id))?.reference).toBe(recorded[ids.indexOf(id)].reference);
    counted.statements.length = 0;
    for (const id of ids.slice(1)) {
      const t = await service.get(id);
      expect(t).toMatchObject({ id, appId, status: 'pending', type: 'pay' });
      expect(t?.createdAt).toBeInstanceOf(Date);
    }
    expect(reads()).toBe(0);
    expect((await service.get(ids[0]))?.id).toBe(ids[0]);
    expect(reads()).toBe(1);
  });

  it('a revoked key is refused at the next request, though it was served from memory just before', async () => {
    const appId = newAppId();
    const key = await apiKeyFor(h, appId);
    const tx = await recordTransaction(h, appId);
    expect((await lookup(h, tx.transaction_id, appId, key.api_key)).status).toBe(200);
    await h.admin('post', `/api-keys/${key.key_id}/revoke`).expect(200);
    const refused = await lookup(h, tx.transaction_id, appId, key.api_key);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('unauthenticated');
  });
});

describe('two instances sharing the database and the invalidation bus', () => {
  let a: TransactionsHarness;
  let b: TransactionsHarness;
  let replicas: Replicas<TransactionsHarness>;
  beforeAll(async () => {
    // a second replica: same database and invalidation bus (see replicaPair)
    replicas = await replicaPair('transactions', (shared) => transactionsHarness({}, shared));
    ({ a, b } = replicas);
  });
  afterAll(() => replicas?.close());

  it('a key revoked on one instance is refused by the other within 1 s', async () => {
    const appId = newAppId();
    const key = await apiKeyFor(a, appId);
    const tx = await recordTransaction(a, appId);
    expect((await lookup(b, tx.transaction_id, appId, key.api_key)).status).toBe(200);
    await a.admin('post', `/api-keys/${key.key_id}/revoke`).expect(200);
    expect((await lookup(a, tx.transaction_id, appId, key.api_key)).status).toBe(401);
    const status = await within1s(async () => (await lookup(b, tx.transaction_id, appId, key.api_key)).status, 401);
    expect(status).toBe(401);
  });

  it('a status change on one instance shows on the other within 1 s', async () => {
    const appId = newAppId();
    const key = await apiKeyFor(a, appId);
    const tx = await recordTransaction(a, appId);
    expect((await lookup(b, tx.transaction_id, appId, key.api_key)).body.transaction_status).toBe('pending');
    await a.admin('post', `/transactions/${tx.transaction_id}/status`).send({ status: 'mined' }).expect(200);
    expect((await lookup(a, tx.transaction_id, appId, key.api_key)).body.transaction_status).toBe('mined');
    const seen = await within1s(
      async () => (await lookup(b, tx.transaction_id, appId, key.api_key)).body.transaction_status,
      'mined',
    );
    expect(seen).toBe('mined');
  });
});

describe('lookups by id use an index (1,000,000 rows cost what 1,000 do)', () => {
  let h: TransactionsHarness;
  beforeAll(async () => {
    h = await transactionsHarness();
  });
  afterAll(() => h.close());

  const plan = (sql: string, params: unknown[]) =>
    h.storage.db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      const [row] = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
      return JSON.stringify(row['QUERY PLAN']);
    });

  it.each([
    ['SELECT * FROM transactions WHERE id = $1', 'transactions_pkey'],
    ['SELECT * FROM api_keys WHERE id = $1', 'api_keys_pkey'],
  ])('%s', async (sql, index) => {
    const text = await plan(sql, ['x']);
    expect(text).toContain('"Node Type":"Index Scan"');
    expect(text).toContain(`"Index Name":"${index}"`);
  });
});

describe('LastUseRecorder', () => {
  it('writes once per key per interval, in the background, and reports a failed write', async () => {
    const writes: string[] = [];
    const failures: string[] = [];
    const recorder = new LastUseRecorder(
      async (id) => {
        writes.push(id);
        if (id === 'bad') throw new Error('down');
      },
      (id, err) => failures.push(`${id}:${err.message}`),
      60000,
    );
    expect(recorder.record('k1', 1000)).toBe(true);
    expect(recorder.record('k1', 30000)).toBe(false);
    expect(recorder.record('k2', 30000)).toBe(true);
    expect(recorder.record('k1', 61000)).toBe(true);
    expect(recorder.record('bad', 61000)).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['k1', 'k2', 'k1', 'bad']);
    expect(failures).toEqual(['bad:down']);
  });
});
