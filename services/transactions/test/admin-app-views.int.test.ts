import request from 'supertest';
import {
  ADDRESS_A,
  ADDRESS_B,
  apiKeyFor,
  newAppId,
  postTransaction,
  receiveAt,
  transactionsHarness,
  type TransactionsHarness,
} from './support';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

const USDCE = `0x${'c'.repeat(40)}`;
const ENV = {
  KEY_ENCRYPTION_KEY: 'webhook-test-key-encryption-key-0123456789',
  WEBHOOK_RETRY_SCHEDULE: '0,0',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  CHAIN_TOKENS: JSON.stringify({ worldchain: { USDCE: { address: USDCE, decimals: 6 } } }),
};

interface Delivery {
  delivery_id: string;
  event_type: string;
  status: string;
  log: { attempt: number; status_code: number | null; error: string | null }[];
}

/**
 * The admin operations the developer portal uses for an app's webhooks and payments (issue #27): a test
 * event and recover for one endpoint, the app's payment requests, transactions by reference and its
 * events, each the app API's operation on the same domain services.
 */
describe('transactions admin: an app’s webhooks and payments', () => {
  let h: TransactionsHarness;
  let receiver: WebhookReceiver;
  let appId: string;
  let apiKey: string;
  beforeAll(async () => {
    h = await transactionsHarness(ENV);
    receiver = await new WebhookReceiver().start();
    appId = newAppId();
    apiKey = (await apiKeyFor(h, appId)).api_key;
    await receiveAt(h, appId, ADDRESS_B);
  });
  afterAll(async () => {
    await h.close();
    await receiver.stop();
  });

  const deliveries = async (id: string): Promise<Delivery[]> =>
    (await h.admin('get', `/webhooks/${id}/deliveries`).expect(200)).body;

  it('sends a test event to one endpoint: delivered, in its delivery log with each attempt, audited', async () => {
    const added = await h
      .admin('post', `/apps/${appId}/webhooks`)
      .send({ url: receiver.url, enabled_events: ['payment_request.*'] })
      .expect(201);
    const id = added.body.webhook_id as string;
    const sent = await h.admin('post', `/webhooks/${id}/test`).expect(202);
    expect(sent.body).toEqual({ webhook_id: id, event_id: expect.stringMatching(/^msg_/), type: 'webhook.test' });
    const [got] = await receiver.waitFor(1, (r) => r.headers['webhook-id'] === sent.body.event_id);
    expect(JSON.parse(got.body)).toMatchObject({ type: 'webhook.test', test: true, data: { webhook_id: id } });
    const log = await eventually(async () => {
      const all = await deliveries(id);
      return all.length === 1 && all[0].status === 'succeeded' ? all : undefined;
    });
    expect(log[0]).toMatchObject({ event_type: 'webhook.test', log: [{ attempt: 1, status_code: 200, error: null }] });
    const audit = await h.admin('get', '/audit').query({ type: 'webhook.test_sent' }).expect(200);
    expect(JSON.stringify(audit.body)).toContain(id);

    await h.admin('post', `/webhooks/${id}/disable`).expect(200);
    const refused = await h.admin('post', `/webhooks/${id}/test`).expect(409);
    expect(refused.body.code).toBe('webhook_disabled');
    await h.admin('post', `/webhooks/wh_${'0'.repeat(32)}/test`).expect(404);
  });

  it('recovers the failed deliveries of one endpoint since a time, and only those', async () => {
    const other = await new WebhookReceiver().start();
    try {
      other.respond = () => ({ status: 500 });
      const added = await h.admin('post', `/apps/${appId}/webhooks`).send({ url: other.url }).expect(201);
      const id = added.body.webhook_id as string;
      const since = new Date(Date.now() - 1000).toISOString();
      await h.admin('post', `/webhooks/${id}/test`).expect(202);
      const failed = await eventually(async () => {
        const all = await deliveries(id);
        return all.length === 1 && all[0].status === 'failed' ? all[0] : undefined;
      });
      expect(failed.log.length).toBeGreaterThan(0);
      expect(failed.log.every((a) => a.status_code === 500)).toBe(true);
      other.respond = () => ({ status: 200 });
      const bad = await h.admin('post', `/webhooks/${id}/recover`).send({ since: 'yesterday' }).expect(400);
      expect(bad.body.detail).toContain('since');
      const recovered = await h.admin('post', `/webhooks/${id}/recover`).send({ since }).expect(202);
      expect(recovered.body).toEqual({ webhook_id: id, since: new Date(since).toISOString(), deliveries: 1 });
      await eventually(async () => {
        const all = await deliveries(id);
        return all.some((d) => d.status === 'succeeded') ? all : undefined;
      });
      // received once now: recover again sends nothing
      const again = await h.admin('post', `/webhooks/${id}/recover`).send({ since }).expect(202);
      expect(again.body.deliveries).toBe(0);
    } finally {
      await other.stop();
    }
  });

  it('lists and reads the app’s payment requests by reference and status; another app’s is 404', async () => {
    const created = await request(h.publicApp)
      .post('/api/v2/client/payment-requests')
      .set('Authorization', `Bearer ${apiKey}`)
      .send({ reference: 'order-admin-1', chain: 'worldchain', token: 'USDCE', to: ADDRESS_B, token_amount: '2500000' })
      .expect(201);
    const list = await h
      .admin('get', `/apps/${appId}/payment-requests`)
      .query({ reference: 'order-admin-1', status: 'pending' })
      .expect(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ id: created.body.id, amount_due: '2500000', reason: null });
    expect(list.body.next_cursor).toBeNull();
    const none = await h.admin('get', `/apps/${appId}/payment-requests`).query({ status: 'paid' }).expect(200);
    expect(none.body.data).toEqual([]);
    const bad = await h.admin('get', `/apps/${appId}/payment-requests`).query({ status: 'nope' }).expect(400);
    expect(bad.body.detail).toContain('status');

    const one = await h.admin('get', `/apps/${appId}/payment-requests/${created.body.id}`).expect(200);
    expect(one.body).toEqual(created.body);
    await h.admin('get', `/apps/${newAppId()}/payment-requests/${created.body.id}`).expect(404);
  });

  it('finds a transaction by reference; lists the app’s events as the app API does', async () => {
    await postTransaction(h, apiKey, {
      app_id: appId,
      type: 'pay',
      reference: 'pay-by-ref-1',
      transaction_hash: `0x${'1'.repeat(64)}`,
      from: ADDRESS_A,
      to: ADDRESS_B,
      chain: 'worldchain',
      token: 'USDCE',
      token_amount: '1000000',
    }).expect(201);
    const found = await h.admin('get', '/transactions').query({ app_id: appId, reference: 'pay-by-ref-1' }).expect(200);
    expect(found.body.transactions).toHaveLength(1);
    expect(found.body.transactions[0]).toMatchObject({ reference: 'pay-by-ref-1', transaction_status: 'pending' });
    const missing = await h.admin('get', '/transactions').query({ app_id: appId, reference: 'nothing' }).expect(200);
    expect(missing.body.transactions).toEqual([]);

    // listed once no transaction that began before it is still running (on a shared Postgres, another may be)
    const admin = await eventually(async () => {
      const res = await h.admin('get', `/apps/${appId}/events`).query({ type: 'transaction.*' }).expect(200);
      return res.body.data.length > 0 ? res : undefined;
    });
    const app = await request(h.publicApp)
      .get('/api/v2/client/events')
      .query({ type: 'transaction.*' })
      .set('Authorization', `Bearer ${apiKey}`)
      .expect(200);
    expect(admin.body).toEqual(app.body);
    expect(admin.body.data.map((e: { type: string }) => e.type)).toContain('transaction.created');
    // test events are not listed
    const all = await h.admin('get', `/apps/${appId}/events`).expect(200);
    expect(all.body.data.some((e: { type: string }) => e.type === 'webhook.test')).toBe(false);
    const bad = await h.admin('get', `/apps/${appId}/events`).query({ type: 'nope.thing' }).expect(400);
    expect(bad.body.detail).toContain('type');
  });
});
