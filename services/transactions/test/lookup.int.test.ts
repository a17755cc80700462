import request from 'supertest';
import {
  ADDRESS_A,
  ADDRESS_B,
  apiKeyFor,
  newAppId,
  recordTransaction,
  transactionsHarness,
  type TransactionsHarness,
} from './support';

describe('GET /api/v2/client/transaction/{id}', () => {
  let h: TransactionsHarness;
  const appId = newAppId();
  const otherApp = newAppId();
  let key: { api_key: string; key_id: string };
  let otherKey: { api_key: string; key_id: string };
  let tx: Record<string, string>;
  beforeAll(async () => {
    h = await transactionsHarness();
    key = await apiKeyFor(h, appId);
    otherKey = await apiKeyFor(h, otherApp);
    tx = await recordTransaction(h, appId, { reference: 'order-1', token_amount: '123456789012345678901234567890' });
  });
  afterAll(() => h.close());

  const lookup = (id: string, query: Record<string, string>, apiKey: string | null = key.api_key) => {
    const req = request(h.publicApp).get(`/api/v2/client/transaction/${id}`).query(query);
    if (apiKey) req.set('Authorization', `Bearer ${apiKey}`);
    return req;
  };

  it('returns exactly the SPEC 2.5 fields', async () => {
    const res = await lookup(tx.transaction_id, { app_id: appId, type: 'pay' });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      reference: 'order-1',
      transaction_hash: null,
      transaction_status: 'pending',
      from: ADDRESS_A,
      chain: 'worldchain',
      timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      token_amount: '123456789012345678901234567890',
      token: 'USDCE',
      to: ADDRESS_B,
      app_id: appId,
    });
    expect(tx.transaction_id).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('accepts payment as pay, and finds sendTransaction ones by transaction; the other type is not found', async () => {
    expect((await lookup(tx.transaction_id, { app_id: appId, type: 'payment' })).status).toBe(200);
    const send = await recordTransaction(h, appId, { type: 'sendTransaction' });
    expect((await lookup(send.transaction_id, { app_id: appId, type: 'transaction' })).status).toBe(200);
    expect((await lookup(send.transaction_id, { app_id: appId, type: 'sendTransaction' })).status).toBe(200);
    const wrongType = await lookup(send.transaction_id, { app_id: appId, type: 'pay' });
    expect(wrongType.status).toBe(404);
  });

  it.each([
    [null, 'unauthenticated'],
    ['Basic abc', 'unauthenticated'],
    ['Bearer api_bm90LWEta2V5LWF0LWFsbC1hdC1hbGw', 'unauthenticated'],
  ])('401 for Authorization %p', async (header, code) => {
    const req = request(h.publicApp)
      .get(`/api/v2/client/transaction/${tx.transaction_id}`)
      .query({ app_id: appId, type: 'pay' });
    if (header) req.set('Authorization', header);
    const res = await req;
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.body).toMatchObject({ code, attribute: null });
  });

  it('400 required / invalid_parameter naming the field', async () => {
    expect((await lookup(tx.transaction_id, { type: 'pay' })).body).toEqual({
      code: 'required',
      detail: 'This attribute is required.',
      attribute: 'app_id',
    });
    expect((await lookup(tx.transaction_id, { app_id: appId })).body).toEqual({
      code: 'required',
      detail: 'This attribute is required.',
      attribute: 'type',
    });
    const badType = await lookup(tx.transaction_id, { app_id: appId, type: 'refund' });
    expect(badType.status).toBe(400);
    expect(badType.body).toMatchObject({ code: 'invalid_parameter', attribute: 'type' });
    const badId = await lookup('0x1234', { app_id: appId, type: 'pay' });
    expect(badId.body).toMatchObject({ code: 'invalid_parameter', attribute: 'transaction_id' });
  });

  it('reads the id in any case, and refuses type names that only objects have (toString, __proto__)', async () => {
    const upper = `0x${tx.transaction_id.slice(2).toUpperCase()}`;
    const res = await lookup(upper, { app_id: appId, type: 'pay' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ reference: 'order-1', app_id: appId });
    for (const type of ['toString', '__proto__', 'constructor']) {
      const bad = await lookup(tx.transaction_id, { app_id: appId, type });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({
        code: 'invalid_parameter',
        detail: 'type must be pay or sendTransaction.',
        attribute: 'type',
      });
    }
    const blankApp = await lookup(tx.transaction_id, { app_id: '  ', type: 'pay' });
    expect(blankApp.status).toBe(400);
    expect(blankApp.body).toMatchObject({ code: 'required', attribute: 'app_id' });
  });

  it('403 invalid_app for another app’s key; 404 for another app’s transaction or an unknown id', async () => {
    const mismatch = await lookup(tx.transaction_id, { app_id: appId, type: 'pay' }, otherKey.api_key);
    expect(mismatch.status).toBe(403);
    expect(mismatch.body).toMatchObject({ code: 'invalid_app', attribute: 'app_id' });
    const theirs = await lookup(tx.transaction_id, { app_id: otherApp, type: 'pay' }, otherKey.api_key);
    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe('not_found');
    const unknown = await lookup(`0x${'0'.repeat(64)}`, { app_id: appId, type: 'pay' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(theirs.body);
  });

  it('a status change shows at the next lookup, even right after a cached read', async () => {
    const t = await recordTransaction(h, appId);
    expect((await lookup(t.transaction_id, { app_id: appId, type: 'pay' })).body.transaction_status).toBe('pending');
    await h.admin('post', `/transactions/${t.transaction_id}/status`).send({ status: 'mined' }).expect(200);
    expect((await lookup(t.transaction_id, { app_id: appId, type: 'pay' })).body.transaction_status).toBe('mined');
  });

  it('only allows pending → mined | failed; repeats are no-ops; history is kept', async () => {
    const t = await recordTransaction(h, appId);
    await h.admin('post', `/transactions/${t.transaction_id}/status`).send({ status: 'failed' }).expect(200);
    const again = await h.admin('post', `/transactions/${t.transaction_id}/status`).send({ status: 'failed' });
    expect(again.status).toBe(200);
    const refused = await h.admin('post', `/transactions/${t.transaction_id}/status`).send({ status: 'mined' });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      code: 'invalid_transition',
      detail: 'The transaction is already failed; it cannot become mined.',
      attribute: 'status',
    });
    const back = await h.admin('post', `/transactions/${t.transaction_id}/status`).send({ status: 'pending' });
    expect(back.status).toBe(409);
    const detail = await h.admin('get', `/transactions/${t.transaction_id}`);
    expect(
      detail.body.history.map((x: { from_status: string; to_status: string; source: string }) => [
        x.from_status,
        x.to_status,
        x.source,
      ]),
    ).toEqual([
      [null, 'pending', 'admin'],
      ['pending', 'failed', 'admin'],
    ]);
  });

  it('refuses bad records naming the field, and a reused reference', async () => {
    const bad = await h.admin('post', '/transactions').send({
      app_id: appId,
      type: 'pay',
      reference: 'r',
      from: ADDRESS_A,
      to: ADDRESS_B,
      chain: 'worldchain',
      token: 'USDCE',
      token_amount: '1.5',
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_parameter', attribute: 'token_amount' });
    const missing = await h.admin('post', '/transactions').send({ app_id: appId, type: 'pay' });
    expect(missing.body).toMatchObject({ code: 'required', attribute: 'reference' });
    const dup = await h.admin('post', '/transactions').send({
      app_id: appId,
      type: 'pay',
      reference: 'order-1',
      from: ADDRESS_A,
      to: ADDRESS_B,
      chain: 'worldchain',
      token: 'USDCE',
      token_amount: '1',
    });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('reference_taken');
  });
});

describe('API keys', () => {
  let h: TransactionsHarness;
  beforeAll(async () => {
    h = await transactionsHarness();
  });
  afterAll(() => h.close());

  it('have the api_ shape, are stored only as keyed hashes, and record their last use', async () => {
    const appId = newAppId();
    const key = await apiKeyFor(h, appId);
    expect(key.api_key).toMatch(/^api_[A-Za-z0-9_-]+$/);
    const inner = Buffer.from(key.api_key.slice(4), 'base64url').toString();
    expect(inner).toMatch(/^key_[0-9a-f]{32}:sk_[0-9a-f]{48}$/);
    const [row] = await h.storage.db.query<{ secret_hash: string; last_used_at: Date | null }>(
      'SELECT * FROM api_keys WHERE id = $1',
      [key.key_id],
    );
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.secret_hash).not.toContain(inner.split(':')[1]);
    expect(row.last_used_at).toBeNull();
    const t = await recordTransaction(h, appId);
    await request(h.publicApp)
      .get(`/api/v2/client/transaction/${t.transaction_id}`)
      .query({ app_id: appId, type: 'pay' })
      .set('Authorization', `Bearer ${key.api_key}`)
      .expect(200);
    await new Promise((r) => setTimeout(r, 100));
    const list = await h.admin('get', `/apps/${appId}/api-keys`);
    expect(list.body).toHaveLength(1);
    expect(list.body[0].last_used_at).not.toBeNull();
    expect(JSON.stringify(list.body)).not.toContain('sk_');
  });

  it('several keys per app; a revoked key stops working at once, even when it was just cached', async () => {
    const appId = newAppId();
    const a = await apiKeyFor(h, appId);
    const b = await apiKeyFor(h, appId);
    const t = await recordTransaction(h, appId);
    const get = (k: string) =>
      request(h.publicApp)
        .get(`/api/v2/client/transaction/${t.transaction_id}`)
        .query({ app_id: appId, type: 'pay' })
        .set('Authorization', `Bearer ${k}`);
    expect((await get(a.api_key)).status).toBe(200);
    expect((await get(b.api_key)).status).toBe(200);
    const revoked = await h.admin('post', `/api-keys/${a.key_id}/revoke`);
    expect(revoked.body.revoked_at).not.toBeNull();
    expect((await get(a.api_key)).status).toBe(401);
    expect((await get(b.api_key)).status).toBe(200);
    // a forged secret for a real key id is refused
    const forged = `api_${Buffer.from(`${b.key_id}:sk_${'0'.repeat(48)}`).toString('base64url')}`;
    expect((await get(forged)).status).toBe(401);
  });
});
