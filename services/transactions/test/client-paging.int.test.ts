import request from 'supertest';
import {
  apiKeyFor,
  newAppId,
  receiveAt,
  recordTransaction,
  transactionsHarness,
  type TransactionsHarness,
} from './support';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

/** Issue 44, item 3: every list of the app API pages with limit and cursor → next_cursor. */
describe('one paging convention for every list of the app API', () => {
  let h: TransactionsHarness;
  let receiver: WebhookReceiver;
  const appId = newAppId();
  let apiKey: string;
  let webhookId: string;
  const get = (path: string, query: Record<string, string | number> = {}) =>
    request(h.publicApp).get(path).query(query).set('Authorization', `Bearer ${apiKey}`);

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    h = await transactionsHarness({
      KEY_ENCRYPTION_KEY: 'webhook-test-key-encryption-key-0123456789',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
    });
    apiKey = (await apiKeyFor(h, appId)).api_key;
    const hook = await request(h.publicApp)
      .post('/api/v2/client/webhooks')
      .set('Authorization', `Bearer ${apiKey}`)
      .send({ url: receiver.url, enabled_events: ['transaction.created'] });
    expect(hook.status).toBe(201);
    webhookId = hook.body.webhook_id;
    // the app receives at the requests' address (one of its receiving addresses)
    await receiveAt(h, appId, `0x${'c'.repeat(40)}`);
    for (let i = 0; i < 5; i++) {
      await recordTransaction(h, appId);
      const created = await request(h.publicApp)
        .post('/api/v2/client/payment-requests')
        .set('Authorization', `Bearer ${apiKey}`)
        .send({
          reference: `paged-${i}`,
          chain: 'worldchain',
          token: 'USDCE',
          to: `0x${'c'.repeat(40)}`,
          token_amount: '1000000',
        });
      expect(created.status).toBe(201);
    }
    // the events are listed once no transaction that began before them is still running
    await eventually(async () =>
      (await get('/api/v2/client/events', { limit: 100 })).body.data.length === 10 ? true : undefined,
    );
  }, 60000);
  afterAll(async () => {
    await h.close();
    await receiver.stop();
  });

  /** Every page of a list at `limit` 2, following next_cursor; the ids of what it listed. */
  async function walk(
    path: string,
    idOf: (item: Record<string, string>) => string,
    last: (body: Record<string, unknown>) => boolean,
  ) {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const res = await get(path, { limit: 2, ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      ids.push(...(res.body.data as Record<string, string>[]).map(idOf));
      if (last(res.body)) return ids;
      cursor = res.body.next_cursor;
      expect(typeof cursor).toBe('string');
    }
    throw new Error(`${path} did not end`);
  }

  it.each([
    ['/api/v2/client/payment-requests', (r: Record<string, string>) => r.id],
    ['/api/v2/client/transactions', (r: Record<string, string>) => r.transaction_id],
  ])('%s pages with limit and cursor to a last page whose next_cursor is null', async (path, idOf) => {
    const ids = await walk(path, idOf, (body) => body.next_cursor === null);
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);
  });

  it('webhook deliveries page with limit and cursor (newest first), next_cursor null on the last page', async () => {
    const ids = await walk(
      `/api/v2/client/webhooks/${webhookId}/deliveries`,
      (d) => d.delivery_id,
      (body) => body.next_cursor === null,
    );
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);
    const bad = await get(`/api/v2/client/webhooks/${webhookId}/deliveries`, { cursor: 'not a cursor' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_parameter', attribute: 'cursor' });
  });

  it('events page with limit and cursor, answering next_cursor and its older name next_after; after still works', async () => {
    const ids = await walk(
      '/api/v2/client/events',
      (e) => e.event_id,
      (body) => body.has_more === false,
    );
    expect(ids).toHaveLength(10);
    expect(new Set(ids).size).toBe(10);

    const first = await get('/api/v2/client/events', { limit: 3 });
    expect(first.body.next_cursor).toBe(ids[2]);
    expect(first.body.next_after).toBe(first.body.next_cursor);
    const byCursor = await get('/api/v2/client/events', { limit: 3, cursor: first.body.next_cursor });
    const byAfter = await get('/api/v2/client/events', { limit: 3, after: first.body.next_after });
    expect(byAfter.status).toBe(200);
    expect(byAfter.body).toEqual(byCursor.body);
    expect(byCursor.body.data.map((e: { event_id: string }) => e.event_id)).toEqual(ids.slice(3, 6));

    const both = await get('/api/v2/client/events', { cursor: ids[0], after: ids[1] });
    expect(both.status).toBe(400);
    expect(both.body).toMatchObject({ code: 'invalid_parameter', attribute: 'cursor' });
    const unknown = await get('/api/v2/client/events', { cursor: `msg_${'0'.repeat(32)}` });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'invalid_parameter', attribute: 'cursor' });
  });
});
