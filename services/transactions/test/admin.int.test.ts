import request from 'supertest';
import { AuditLog } from '@attest/common';
import { testLogger } from '@attest/testing';
import { TransactionService } from '../src/transactions/transaction-service';
import {
  ADMIN_TOKEN,
  apiKeyFor,
  newAppId,
  recordTransaction,
  transactionsHarness,
  type TransactionsHarness,
} from './support';

const OPS_TOKEN = 'ops-bob-token-0123456789abcdefgh';

interface Entry {
  type: string;
  subject: string | null;
  actor: { type: string; id: string | null };
  detail: Record<string, unknown>;
}

/** The transactions admin API: listing, history, API keys, and the audit of each change. */
describe('transactions admin API and audit trail', () => {
  let h: TransactionsHarness;
  beforeAll(async () => {
    h = await transactionsHarness({ ADMIN_TOKENS: `ops-bob:${OPS_TOKEN}` });
  });
  afterAll(() => h.close());

  const asOps = (method: 'get' | 'post', route: string) =>
    request(h.adminApp)[method](`/admin${route}`).set('Authorization', `Bearer ${OPS_TOKEN}`);
  async function auditOf(type: string, subject?: string): Promise<Entry[]> {
    const res = await h.admin('get', `/audit?type=${type}&limit=1000`).expect(200);
    return (res.body.events as Entry[]).filter((e) => subject === undefined || e.subject === subject);
  }

  it('lists an app’s transactions newest first, by status, in pages', async () => {
    const appId = newAppId();
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await recordTransaction(h, appId));
    await h.admin('post', `/transactions/${made[0].transaction_id}/status`).send({ status: 'mined' }).expect(200);
    await recordTransaction(h, newAppId());
    const first = await h.admin('get', `/transactions?app_id=${appId}&limit=2`).expect(200);
    expect(first.body.transactions.map((t: { transaction_id: string }) => t.transaction_id)).toEqual([
      made[2].transaction_id,
      made[1].transaction_id,
    ]);
    expect(first.body.transactions[0]).toMatchObject({
      app_id: appId,
      transaction_status: 'pending',
      type: 'pay',
      token_amount: '1500000',
      updated_at: expect.any(String),
    });
    const second = await h
      .admin('get', `/transactions?app_id=${appId}&limit=2&cursor=${first.body.next_cursor}`)
      .expect(200);
    expect(second.body).toEqual({
      transactions: [expect.objectContaining({ transaction_id: made[0].transaction_id })],
      next_cursor: null,
    });
    const mined = await h.admin('get', `/transactions?app_id=${appId}&status=mined`).expect(200);
    expect(mined.body.transactions.map((t: { transaction_id: string }) => t.transaction_id)).toEqual([
      made[0].transaction_id,
    ]);
    for (const [query, attribute] of [
      ['', 'app_id'],
      [`app_id=${appId}&status=lost`, 'status'],
      ['app_id=nope', 'app_id'],
      [`app_id=${appId}&cursor=0x1`, 'cursor'],
    ]) {
      const bad = await h.admin('get', `/transactions?${query}`);
      expect(bad.status).toBe(400);
      expect(bad.body.attribute).toBe(attribute);
    }
  });

  it('shows a transaction with its status history', async () => {
    const t = await recordTransaction(h, newAppId());
    await h.admin('post', `/transactions/${t.transaction_id}/status`).send({ status: 'failed' }).expect(200);
    const shown = await h.admin('get', `/transactions/${t.transaction_id}`).expect(200);
    expect(shown.body.history).toEqual([
      {
        from_status: null,
        to_status: 'pending',
        source: 'admin',
        changed_at: expect.any(String),
        reason: null,
        reason_detail: null,
      },
      {
        from_status: 'pending',
        to_status: 'failed',
        source: 'admin',
        changed_at: expect.any(String),
        reason: null,
        reason_detail: null,
      },
    ]);
  });

  it('audits transactions recorded and each status change, with who did it', async () => {
    const t = await recordTransaction(h, newAppId());
    await asOps('post', `/transactions/${t.transaction_id}/status`).send({ status: 'mined' }).expect(200);
    // a refused transition changes nothing, and records nothing
    expect((await h.admin('post', `/transactions/${t.transaction_id}/status`).send({ status: 'failed' })).status).toBe(
      409,
    );
    expect((await auditOf('transaction.recorded', t.transaction_id))[0]).toMatchObject({
      actor: { type: 'operator', id: 'admin' },
      detail: { status: 'pending', source: 'admin' },
    });
    expect(await auditOf('transaction.status_changed', t.transaction_id)).toEqual([
      expect.objectContaining({
        actor: { type: 'operator', id: 'ops-bob' },
        detail: expect.objectContaining({ from: 'pending', to: 'mined' }),
      }),
    ]);
  });

  it('audits a change by the chain watcher as the system, in the same database transaction', async () => {
    const t = await recordTransaction(h, newAppId(), { transaction_hash: `0x${'c'.repeat(64)}` });
    const audit = new AuditLog(h.storage.db, testLogger, { retentionDays: 365 });
    const service = new TransactionService(h.storage.db, h.storage.bus, { audit });
    await service.transition(t.transaction_id, 'mined', 'chain:1@42');
    expect((await auditOf('transaction.status_changed', t.transaction_id))[0]).toMatchObject({
      actor: { type: 'system', id: 'chain' },
      detail: { source: 'chain:1@42' },
    });
  });

  it('audits API keys created and revoked; a revoked key is refused at once', async () => {
    const appId = newAppId();
    const created = await asOps('post', `/apps/${appId}/api-keys`).send({ name: 'ci' }).expect(201);
    const t = await recordTransaction(h, appId);
    const lookup = () =>
      request(h.publicApp)
        .get(`/api/v2/client/transaction/${t.transaction_id}`)
        .query({ app_id: appId, type: 'pay' })
        .set('Authorization', `Bearer ${created.body.api_key}`);
    expect((await lookup()).status).toBe(200);
    const list = await h.admin('get', `/apps/${appId}/api-keys`).expect(200);
    expect(list.body).toEqual([expect.objectContaining({ key_id: created.body.key_id, name: 'ci', revoked_at: null })]);
    await h.admin('post', `/api-keys/${created.body.key_id}/revoke`).expect(200);
    expect((await lookup()).status).toBe(401);
    expect((await auditOf('api_key.created', created.body.key_id))[0]).toMatchObject({
      actor: { id: 'ops-bob' },
      detail: { app_id: appId, name: 'ci' },
    });
    expect((await auditOf('api_key.revoked', created.body.key_id))[0]).toMatchObject({
      actor: { id: 'admin' },
      detail: { app_id: appId },
    });
    expect(JSON.stringify(await auditOf('api_key.created'))).not.toContain(created.body.api_key);
  });

  it('refuses an API key for a malformed app_id with 400 invalid_parameter naming app_id, storing nothing', async () => {
    const keys = async () => (await h.storage.db.query('SELECT id FROM api_keys')).length;
    const before = await keys();
    for (const appId of ['nope', 'app_123', `app_${'A'.repeat(32)}`]) {
      const malformed = {
        code: 'invalid_parameter',
        detail: 'app_id must be app_ followed by 32 hexadecimal digits',
        attribute: 'app_id',
      };
      const res = await h.admin('post', `/apps/${appId}/api-keys`).send({ name: 'ci' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(malformed);
      // listing an app's keys names the malformed app_id too, rather than answering []
      const list = await h.admin('get', `/apps/${appId}/api-keys`);
      expect(list.status).toBe(400);
      expect(list.body).toEqual(malformed);
    }
    expect(await keys()).toBe(before);
    expect(await auditOf('api_key.created', undefined)).not.toContainEqual(
      expect.objectContaining({ detail: expect.objectContaining({ app_id: 'nope' }) }),
    );
  });

  it('answers an admin POST without a JSON body with 400 naming the first required field, not 500', async () => {
    const none = await h.admin('post', '/transactions');
    expect(none.status).toBe(400);
    expect(none.body).toEqual({ code: 'required', detail: 'This attribute is required.', attribute: 'app_id' });
    const t = await recordTransaction(h, newAppId());
    const status = await h.admin('post', `/transactions/${t.transaction_id}/status`).type('text').send('mined');
    expect(status.status).toBe(400);
    expect(status.body).toMatchObject({ code: 'required', attribute: 'status' });
    const shown = await h.admin('get', `/transactions/${t.transaction_id}`).expect(200);
    expect(shown.body.transaction_status).toBe('pending');
    // a key without a body is a key without a name
    const key = await h.admin('post', `/apps/${newAppId()}/api-keys`).expect(201);
    expect(key.body).toMatchObject({ name: null, revoked_at: null });
  });

  it('serves the audit with the admin token only, and purges by AUDIT_RETENTION_DAYS', async () => {
    await apiKeyFor(h, newAppId());
    expect(
      (await request(h.adminApp).get('/admin/audit').set('Authorization', 'Bearer wrong-token-0123456789abcdef'))
        .status,
    ).toBe(401);
    expect(
      (await request(h.adminApp).get('/admin/audit').set('Authorization', `Bearer ${ADMIN_TOKEN}`)).body.events.length,
    ).toBeGreaterThan(0);
    await h.storage.db.query(
      "INSERT INTO audit_events (at, type, actor_type) VALUES (now() - interval '2 days', 'api_key.created', 'system')",
    );
    const short = new AuditLog(h.storage.db, testLogger, { retentionDays: 1 });
    expect(await short.purge()).toBe(1);
    expect(await h.storage.db.query("SELECT 1 FROM audit_events WHERE at < now() - interval '1 day'")).toHaveLength(0);
  });
});
