import request from 'supertest';
import { randomHex } from '@attest/testing';
import { MAX_ENDPOINTS_PER_APP } from '../src/webhooks/webhook-service';
import { ADDRESS_A, apiKeyFor, newAppId, receiveAt, transactionsHarness, type TransactionsHarness } from './support';
import { PriceStub } from './support/price-stub';

/*
 * Issue 25: the rules of payment requests and app webhooks hold when many requests arrive at once (the
 * database decides, not a read before the write): one request per reference, at most 20 endpoints per app,
 * one transfer claimed by one request, one token per request. On the embedded backend and, with
 * TEST_DATABASE_URL and TEST_REDIS_URL, on Postgres and Redis.
 */

const ENV = {
  KEY_ENCRYPTION_KEY: 'webhook-test-key-encryption-key-0123456789',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '60000',
  PAYMENT_REQUEST_SWEEP_INTERVAL_MS: '3600000',
  CHAIN_TOKENS: JSON.stringify({
    worldchain: {
      USDCE: { address: '0x79A02482A880bCE3F13e09Da970dC34db4CD24d1', decimals: 6 },
      WLD: { address: '0x2cFc85d8E48F8EAB294be644d9E25C3030863003', decimals: 18 },
    },
  }),
};

const hash = () => `0x${randomHex(32)}`;

describe('payment requests and app webhooks under concurrency (issue 25)', () => {
  let h: TransactionsHarness;
  const prices = new PriceStub();
  beforeAll(async () => {
    prices.prices = { USDCE: { amount: '100', decimals: 2 }, WLD: { amount: '250', decimals: 2 } };
    h = await transactionsHarness({ ...ENV, PRICES_URL: await prices.listen(), PAYMENT_PRICE_MAX_AGE_SECONDS: '300' });
  });
  afterAll(async () => {
    await h.close();
    await prices.close();
  });

  /** Each app's own receiving address (one app receives at an address). */
  const receivers = new Map<string, string>();
  async function newApp() {
    const appId = newAppId();
    const { api_key: key } = await apiKeyFor(h, appId);
    receivers.set(appId, `0x${randomHex(20)}`);
    await receiveAt(h, appId, receivers.get(appId));
    const post = (path: string, body: object) =>
      request(h.publicApp).post(path).set('Authorization', `Bearer ${key}`).send(body);
    const get = (path: string) => request(h.publicApp).get(path).set('Authorization', `Bearer ${key}`);
    const remove = (path: string) => request(h.publicApp).delete(path).set('Authorization', `Bearer ${key}`);
    return { appId, post, get, remove };
  }

  const count = async (sql: string, params: unknown[]) =>
    Number((await h.storage.db.query<{ n: string }>(sql, params))[0].n);

  it('the same reference created 25 times at once: one request, the others answer it (200, same id)', async () => {
    const app = await newApp();
    const body = {
      reference: 'race-order-1',
      chain: 'worldchain',
      accepted_tokens: ['USDCE'],
      to: receivers.get(app.appId),
      token_amount: '1000000',
    };
    const answers = await Promise.all(
      Array.from({ length: 25 }, () => app.post('/api/v2/client/payment-requests', body)),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(24);
    const ids = new Set(answers.map((r) => r.body.id as string));
    expect(ids.size).toBe(1);
    const [id] = ids;
    for (const r of answers)
      expect(r.body).toMatchObject({
        id,
        status: 'pending',
        token: 'USDCE',
        amount_due: '1000000',
        accepted_tokens: [{ token: 'USDCE', amount_due: '1000000', price: null }],
      });
    expect(
      await count('SELECT count(*) AS n FROM payment_requests WHERE app_id = $1 AND reference = $2', [
        app.appId,
        'race-order-1',
      ]),
    ).toBe(1);
    expect(await count('SELECT count(*) AS n FROM payment_request_tokens WHERE payment_request_id = $1', [id])).toBe(1);
    expect(
      await count(
        "SELECT count(*) AS n FROM webhook_events WHERE payment_request_id = $1 AND type = 'payment_request.created'",
        [id],
      ),
    ).toBe(1);
  });

  it('one reference created at once with two bodies: one request; the same body answers it, the other is 409 naming the field', async () => {
    const app = await newApp();
    const body = (amount: string) => ({
      reference: 'race-order-2',
      chain: 'worldchain',
      token: 'USDCE',
      to: receivers.get(app.appId),
      token_amount: amount,
    });
    const asked = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? '1000000' : '2000000'));
    const answers = await Promise.all(asked.map((a) => app.post('/api/v2/client/payment-requests', body(a))));
    const created = answers.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    const winner = created[0].body as { id: string; amount_due: string };
    answers.forEach((r, i) => {
      if (r.status === 201) return;
      if (asked[i] === winner.amount_due) expect(r.status === 200 && r.body.id === winner.id).toBe(true);
      else {
        expect(r.status).toBe(409);
        expect(r.body).toMatchObject({ code: 'reference_taken', attribute: 'token_amount' });
      }
    });
    expect(answers.filter((r) => r.status === 409)).toHaveLength(10);
    const rows = await h.storage.db.query<{ id: string; amount_due: string }>(
      'SELECT id, amount_due FROM payment_requests WHERE app_id = $1',
      [app.appId],
    );
    expect(rows.map((r) => [r.id, String(r.amount_due)])).toEqual([[winner.id, winner.amount_due]]);
  });

  it(`30 webhook endpoints created at once: exactly ${MAX_ENDPOINTS_PER_APP} stored, the rest 409 too_many_webhooks`, async () => {
    const app = await newApp();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        app.post('/api/v2/client/webhooks', { url: `http://127.0.0.1:9/hook-${i}` }),
      ),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(MAX_ENDPOINTS_PER_APP);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(30 - MAX_ENDPOINTS_PER_APP);
    for (const r of refused) {
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({ code: 'too_many_webhooks', attribute: 'url' });
    }
    expect(await count('SELECT count(*) AS n FROM webhook_endpoints WHERE app_id = $1', [app.appId])).toBe(
      MAX_ENDPOINTS_PER_APP,
    );
    // removing one frees one slot, and only one
    const list = await app.get('/api/v2/client/webhooks');
    expect(list.body).toHaveLength(MAX_ENDPOINTS_PER_APP);
    const removed = await app.remove(`/api/v2/client/webhooks/${list.body[0].webhook_id}`);
    expect(removed.status).toBe(200);
    const again = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        app.post('/api/v2/client/webhooks', { url: `http://127.0.0.1:9/again-${i}` }),
      ),
    );
    expect(again.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    expect(await count('SELECT count(*) AS n FROM webhook_endpoints WHERE app_id = $1', [app.appId])).toBe(
      MAX_ENDPOINTS_PER_APP,
    );
  });

  async function requests(app: Awaited<ReturnType<typeof newApp>>, n: number, extra: object = {}) {
    const made: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await app.post('/api/v2/client/payment-requests', {
        reference: `claim-${i}-${randomHex(4)}`,
        chain: 'worldchain',
        token: 'USDCE',
        to: receivers.get(app.appId),
        token_amount: '1000000',
        ...extra,
      });
      expect(res.status).toBe(201);
      made.push(res.body.id as string);
    }
    return made;
  }

  const payment = (appId: string, requestId: string, transactionHash: string, token = 'USDCE') => ({
    app_id: appId,
    type: 'pay',
    reference: `payment-${randomHex(6)}`,
    transaction_hash: transactionHash,
    chain: 'worldchain',
    token,
    to: receivers.get(appId),
    from: ADDRESS_A,
    token_amount: '1000000',
    payment_request_id: requestId,
  });

  it('one transaction_hash attached to 10 requests at once: one claims it, the others 409 transaction_already_claimed', async () => {
    const app = await newApp();
    const ids = await requests(app, 10);
    const tx = hash();
    const answers = await Promise.all(
      ids.map((id) => app.post('/api/v2/client/transaction', payment(app.appId, id, tx))),
    );
    const claimed = answers.filter((r) => r.status === 201);
    expect(claimed).toHaveLength(1);
    for (const r of answers.filter((a) => a.status !== 201)) {
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({ code: 'transaction_already_claimed', attribute: 'transaction_hash' });
    }
    const rows = await h.storage.db.query<{ payment_request_id: string }>(
      'SELECT payment_request_id FROM transactions WHERE transaction_hash = $1',
      [tx],
    );
    expect(rows).toHaveLength(1);
    expect(ids).toContain(rows[0].payment_request_id);
  });

  it('one transaction_hash attached at once by two apps to their requests: one claims it', async () => {
    const [a, b] = [await newApp(), await newApp()];
    const [ra] = await requests(a, 1);
    const [rb] = await requests(b, 1);
    const tx = hash();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? a.post('/api/v2/client/transaction', payment(a.appId, ra, tx))
          : b.post('/api/v2/client/transaction', payment(b.appId, rb, tx)),
      ),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409)).toHaveLength(5);
    expect(await count('SELECT count(*) AS n FROM transactions WHERE transaction_hash = $1', [tx])).toBe(1);
  });

  it('payments toward one request recorded at once in two accepted tokens: the request takes one token, the other is 409', async () => {
    const app = await newApp();
    const created = await app.post('/api/v2/client/payment-requests', {
      reference: `two-tokens-${randomHex(4)}`,
      chain: 'worldchain',
      accepted_tokens: ['USDCE', 'WLD'],
      to: receivers.get(app.appId),
      amount: '10',
      currency: 'USD',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ token: null, amount_due: null, amount_remaining: null });
    const id = created.body.id as string;
    const tokens = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? 'USDCE' : 'WLD'));
    const answers = await Promise.all(
      tokens.map((token) => app.post('/api/v2/client/transaction', payment(app.appId, id, hash(), token))),
    );
    const first = answers.findIndex((r) => r.status === 201);
    const won = tokens[first];
    answers.forEach((r, i) => {
      if (tokens[i] === won) expect(r.status).toBe(201);
      else {
        expect(r.status).toBe(409);
        expect(r.body).toMatchObject({ code: 'payment_token_mismatch', attribute: 'token' });
        expect(r.body.detail).toContain(`is being paid in ${won}`);
      }
    });
    const [row] = await h.storage.db.query<{ token: string; amount_due: string }>(
      'SELECT token, amount_due FROM payment_requests WHERE id = $1',
      [id],
    );
    const due = won === 'USDCE' ? '10000000' : '4000000';
    expect([row.token, String(row.amount_due)]).toEqual([won, due]);
    const stored = await h.storage.db.query<{ token: string }>(
      'SELECT DISTINCT token FROM transactions WHERE payment_request_id = $1',
      [id],
    );
    expect(stored).toEqual([{ token: won }]);
  });
});
