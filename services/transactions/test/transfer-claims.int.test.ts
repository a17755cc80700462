import path from 'node:path';
import { migrate, readMigrations } from '@attest/common';
import { testDatabase } from '@attest/testing';
import {
  apiKeyFor,
  newAppId,
  postTransaction,
  receiveAt,
  recordTransaction,
  transactionsHarness,
  type TransactionsHarness,
} from './support';

const MIGRATIONS = path.join(__dirname, '..', 'migrations');
const FROM = '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed';
const TO = '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359';
/** Each app's own receiving address (one app receives at an address); the first app's is TO. */
const TO_OF = [TO, `0x${'71'.repeat(20)}`, `0x${'72'.repeat(20)}`];
let hashes = 0;
/** A transaction hash no other test uses. */
const newHash = () => `0x${(++hashes).toString(16).padStart(4, '0')}${'7c'.repeat(30)}`;

const CLAIMED = {
  code: 'transaction_already_claimed',
  detail:
    'Another recorded payment already claims this transaction_hash on this chain; one on-chain transaction pays at most one payment.',
  attribute: 'transaction_hash',
};

/** Issue 23, item 1: one on-chain transaction pays at most one recorded payment, across all apps. */
describe('one on-chain transaction is claimed by at most one recorded payment', () => {
  let h: TransactionsHarness;
  const apps = [newAppId(), newAppId(), newAppId()];
  const keys: string[] = [];

  beforeAll(async () => {
    h = await transactionsHarness();
    for (const [i, app] of apps.entries()) {
      keys.push((await apiKeyFor(h, app)).api_key);
      await receiveAt(h, app, TO_OF[i]);
    }
  });
  afterAll(() => h.close());

  const payment = (app: number, reference: string, hash: string, extra: Record<string, string> = {}) => ({
    app_id: apps[app],
    type: 'pay',
    reference,
    transaction_hash: hash,
    chain: 'worldchain',
    token: 'USDCE',
    to: TO_OF[app],
    token_amount: '1500000',
    from: FROM,
    ...extra,
  });
  const rowsOf = (hash: string) =>
    h.storage.db.query<{ app_id: string; reference: string; status: string }>(
      'SELECT app_id, reference, status FROM transactions WHERE transaction_hash = $1 ORDER BY created_at',
      [hash],
    );

  it('records the same hash under two orders: the second is 409 transaction_already_claimed, naming transaction_hash', async () => {
    const hash = newHash();
    const first = await postTransaction(h, keys[0], payment(0, 'order-1', hash));
    expect(first.status).toBe(201);
    const second = await postTransaction(h, keys[0], payment(0, 'order-2', hash));
    expect(second.status).toBe(409);
    expect(second.body).toEqual(CLAIMED);
    // another app, and the hash in upper case, are the same transaction
    const other = await postTransaction(h, keys[1], payment(1, 'order-1', hash.toUpperCase().replace('0X', '0x')));
    expect(other.status).toBe(409);
    expect(other.body).toEqual(CLAIMED);
    expect(await rowsOf(hash)).toEqual([{ app_id: apps[0], reference: 'order-1', status: 'pending' }]);
    // nothing else was written for the refused records: no audit event, no webhook event
    const [audit] = await h.storage.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM audit_events WHERE type = 'transaction.recorded' AND detail->>'reference' = 'order-2'",
    );
    expect(Number(audit.n)).toBe(0);
  });

  it('concurrent records of one hash under different references and apps: exactly one 201, the rest 409, one row', async () => {
    const hash = newHash();
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => postTransaction(h, keys[i % 3], payment(i % 3, `race-${i}`, hash))),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(23);
    for (const refused of answers.filter((a) => a.status === 409)) expect(refused.body).toEqual(CLAIMED);
    const winner = answers.find((a) => a.status === 201)!;
    const rows = await rowsOf(hash);
    expect(rows).toEqual([{ app_id: winner.body.app_id, reference: winner.body.reference, status: 'pending' }]);
    const [events] = await h.storage.db.query<{ n: string }>(
      'SELECT count(*) AS n FROM webhook_events WHERE transaction_id IN (SELECT id FROM transactions WHERE transaction_hash = $1)',
      [hash],
    );
    expect(Number(events.n)).toBe(1);
  });

  it('keeps the record idempotent: the same record sent again, even many at once, answers the one transaction', async () => {
    const hash = newHash();
    const sent = payment(2, 'order-again', hash);
    const answers = await Promise.all(Array.from({ length: 12 }, () => postTransaction(h, keys[2], sent)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(11);
    expect(new Set(answers.map((a) => a.body.transaction_id)).size).toBe(1);
    const again = await postTransaction(h, keys[2], sent);
    expect(again.status).toBe(200);
    expect(again.body.transaction_id).toBe(answers[0].body.transaction_id);
    // the same reference with another hash is still reference_taken, naming the field
    const changed = await postTransaction(h, keys[2], { ...sent, transaction_hash: newHash() });
    expect(changed.status).toBe(409);
    expect(changed.body.code).toBe('reference_taken');
    expect(changed.body.attribute).toBe('transaction_hash');
    expect(await rowsOf(hash)).toHaveLength(1);
  });

  it('a payment that failed lets its transaction go: it can be recorded again (someone else’s record cannot block it for good)', async () => {
    const hash = newHash();
    const squatter = await postTransaction(h, keys[1], payment(1, 'not-mine', hash, { from: `0x${'e'.repeat(40)}` }));
    expect(squatter.status).toBe(201);
    expect((await postTransaction(h, keys[0], payment(0, 'mine', hash))).status).toBe(409);
    const failed = await h
      .admin('post', `/transactions/${squatter.body.transaction_id}/status`)
      .send({ status: 'failed' });
    expect(failed.status).toBe(200);
    const mine = await postTransaction(h, keys[0], payment(0, 'mine', hash));
    expect(mine.status).toBe(201);
    expect(await rowsOf(hash)).toEqual([
      { app_id: apps[1], reference: 'not-mine', status: 'failed' },
      { app_id: apps[0], reference: 'mine', status: 'pending' },
    ]);
  });

  it('the operator’s record is held to the same rule: 409 transaction_already_claimed', async () => {
    const hash = newHash();
    const mined = await recordTransaction(h, apps[0], { transaction_hash: hash, status: 'mined' });
    expect(mined.transaction_status).toBe('mined');
    const res = await h.admin('post', '/transactions').send({
      app_id: apps[1],
      type: 'pay',
      reference: 'admin-2',
      from: FROM,
      to: TO,
      chain: 'worldchain',
      token: 'USDCE',
      token_amount: '1500000',
      transaction_hash: hash,
    });
    expect(res.status).toBe(409);
    expect(res.body).toEqual(CLAIMED);
    const [claim] = await h.storage.db.query<{ transaction_id: string }>(
      'SELECT transaction_id FROM transfer_claims WHERE transaction_hash = $1',
      [hash],
    );
    expect(claim.transaction_id).toBe(mined.transaction_id);
    // the same hash on another chain is another transaction
    expect(
      (await recordTransaction(h, apps[1], { transaction_hash: hash, chain: 'ethereum' })).transaction_status,
    ).toBe('pending');
  });
});

describe('migration 006 on a database that already holds several records of one transaction', () => {
  it('keeps the rows, lets one of them hold the transaction (a mined one first), and claims the mined one', async () => {
    const db = await testDatabase('transactions');
    try {
      await migrate(
        db,
        readMigrations(MIGRATIONS).filter((m) => m.version < 6),
      );
      const hash = newHash();
      const insert = (id: string, reference: string, status: string, createdAt: string) =>
        db.query(
          `INSERT INTO transactions (id, app_id, type, reference, transaction_hash, status, from_address, to_address, chain, token, token_amount, created_at)
           VALUES ($1, 'app_x', 'pay', $2, $3, $4, $5, $6, 'worldchain', 'USDCE', 1500000, $7)`,
          [id, reference, hash, status, FROM, TO, createdAt],
        );
      await insert('0x01', 'order-1', 'pending', '2026-01-01T00:00:00Z');
      await insert('0x02', 'order-2', 'mined', '2026-01-02T00:00:00Z');
      await insert('0x03', 'order-3', 'pending', '2026-01-03T00:00:00Z');
      await insert('0x04', 'order-4', 'failed', '2026-01-04T00:00:00Z');
      expect(await migrate(db, readMigrations(MIGRATIONS))).toContain(6);
      const rows = await db.query<{ id: string; claims_transfer: boolean }>(
        'SELECT id, claims_transfer FROM transactions ORDER BY id',
      );
      expect(rows).toEqual([
        { id: '0x01', claims_transfer: false },
        { id: '0x02', claims_transfer: true },
        { id: '0x03', claims_transfer: false },
        { id: '0x04', claims_transfer: true },
      ]);
      expect(await db.query('SELECT transaction_id, log_index FROM transfer_claims')).toEqual([
        { transaction_id: '0x02', log_index: null },
      ]);
    } finally {
      await db.close();
    }
  });
});
