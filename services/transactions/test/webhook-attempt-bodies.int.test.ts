import request from 'supertest';
import { freePort } from '@attest/testing';
import { apiKeyFor, newAppId, transactionsHarness, type TransactionsHarness } from './support';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

const ENV = {
  KEY_ENCRYPTION_KEY: 'webhook-test-key-encryption-key-0123456789',
  WEBHOOK_RETRY_SCHEDULE: '0,0,1',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_ALLOW_PRIVATE: 'true',
};

interface Attempt {
  attempt: number;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  request_body: string;
  request_body_truncated: boolean;
  response_body: string | null;
  response_body_truncated: boolean;
}
interface Delivery {
  delivery_id: string;
  event_id: string;
  status: string;
  log: Attempt[];
}

/**
 * The delivery log keeps what each attempt sent and got back (issue 40, item 13): its status, how long it
 * took, the body sent (the event's) and the first 4096 bytes of the answer's body, marked when longer;
 * no header (so no signature) and never the signing secret. The admin API (the portal's) and the app API
 * answer the same log.
 */
describe('webhook delivery attempts: status, duration and bodies', () => {
  let h: TransactionsHarness;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    h = await transactionsHarness(ENV);
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await h.close();
    await receiver.stop();
  });

  const deliveries = async (id: string): Promise<Delivery[]> =>
    (await h.admin('get', `/webhooks/${id}/deliveries`).expect(200)).body;

  it('logs each attempt’s answer body (the first 4096 bytes, marked when longer) and the body sent, no header', async () => {
    const appId = newAppId();
    const added = await h.admin('post', `/apps/${appId}/webhooks`).send({ url: receiver.url }).expect(201);
    const id = added.body.webhook_id as string;
    const secret = added.body.secret as string;
    // the first answer: a 500 with a long body (multi-byte characters too); the retry: a 200 with a short one
    const long = `${'é'.repeat(1000)}${'x'.repeat(5000)}`;
    receiver.answer({ status: 500, body: long, headers: { 'content-type': 'text/plain; charset=utf-8' } });
    receiver.answer({ status: 200, body: '{"received":true}', headers: { 'content-type': 'application/json' } });
    const sent = await h.admin('post', `/webhooks/${id}/test`).expect(202);
    const got = await receiver.waitFor(2, (r) => r.headers['webhook-id'] === sent.body.event_id);
    const [delivery] = await eventually(async () => {
      const all = await deliveries(id);
      return all.length === 1 && all[0].status === 'succeeded' ? all : undefined;
    });
    expect(delivery.log).toHaveLength(2);
    const [first, second] = delivery.log;
    // 4096 bytes of the answer: 1000 two-byte characters, then 2096 of the rest
    expect(first).toEqual({
      attempt: 1,
      started_at: expect.any(String),
      status_code: 500,
      error: 'HTTP 500',
      latency_ms: expect.any(Number),
      request_body: got[0].body,
      request_body_truncated: false,
      response_body: `${'é'.repeat(1000)}${'x'.repeat(2096)}`,
      response_body_truncated: true,
    });
    expect(second).toEqual({
      attempt: 2,
      started_at: expect.any(String),
      status_code: 200,
      error: null,
      latency_ms: expect.any(Number),
      request_body: got[1].body,
      request_body_truncated: false,
      response_body: '{"received":true}',
      response_body_truncated: false,
    });
    expect(first.latency_ms).toBeGreaterThanOrEqual(0);
    // no header is logged: neither the signature nor the secret it is made with
    const text = JSON.stringify(delivery);
    expect(text).not.toContain(got[0].headers['webhook-signature']);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.replace(/^whsec_/, ''));
    const stored = await h.storage.db.query<{ response_body: string | null }>(
      'SELECT response_body FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt',
      [delivery.delivery_id],
    );
    expect(stored.map((r) => Buffer.byteLength(r.response_body ?? ''))).toEqual([4096, 17]);
    // the app API answers the same log
    const key = await apiKeyFor(h, appId);
    const own = await request(h.publicApp)
      .get(`/api/v2/client/webhooks/${id}/deliveries`)
      .set('Authorization', `Bearer ${key.api_key}`)
      .expect(200);
    expect((own.body as { data: Delivery[] }).data[0].log).toEqual(delivery.log);
  });

  it('an attempt with no answer (nothing listens) has no response body; an empty answer an empty one', async () => {
    const appId = newAppId();
    const port = await freePort();
    const dead = await h
      .admin('post', `/apps/${appId}/webhooks`)
      .send({ url: `http://127.0.0.1:${port}/hooks` })
      .expect(201);
    await h.admin('post', `/webhooks/${dead.body.webhook_id as string}/test`).expect(202);
    const [refused] = await eventually(async () => {
      const all = await deliveries(dead.body.webhook_id as string);
      return all[0]?.log.length ? all[0].log : undefined;
    });
    expect(refused).toMatchObject({ status_code: null, response_body: null, response_body_truncated: false });
    expect(refused.error).toEqual(expect.any(String));
    expect(JSON.parse(refused.request_body)).toMatchObject({ type: 'webhook.test', test: true });

    const ok = await h.admin('post', `/apps/${appId}/webhooks`).send({ url: receiver.url }).expect(201);
    receiver.answer({ status: 204 });
    await h.admin('post', `/webhooks/${ok.body.webhook_id as string}/test`).expect(202);
    const [empty] = await eventually(async () => {
      const all = await deliveries(ok.body.webhook_id as string);
      return all[0]?.status === 'succeeded' ? all[0].log : undefined;
    });
    expect(empty).toMatchObject({ status_code: 204, response_body: '', response_body_truncated: false });
  });
});
