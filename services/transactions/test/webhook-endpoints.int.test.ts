import path from 'node:path';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { testDatabase } from '@attest/testing';
import { purgeWebhookHistory } from '../src/webhooks/webhook-retention';
import { apiKeyFor, newAppId, recordTransaction, transactionsHarness, type TransactionsHarness } from './support';
import { eventOf, eventually, WebhookReceiver, type Received } from './support/webhook-receiver';

const ENV = {
  KEY_ENCRYPTION_KEY: 'webhook-test-key-encryption-key-0123456789',
  WEBHOOK_RETRY_SCHEDULE: '0,0,1',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_ALLOW_PRIVATE: 'true',
};
const MIGRATIONS = path.join(__dirname, '..', 'migrations');
const BASE = '/api/v2/client/webhooks';

interface Endpoint {
  webhook_id: string;
  secret: string;
  url: string;
  status: string;
  enabled_events: string[];
  disabled_at: string | null;
  consecutive_failures: number;
  throttled_until: string | null;
}

interface Delivery {
  delivery_id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  log: { attempt: number; status_code: number | null }[];
}

/** An app as its backend sees the API: its id and calls with its API key. */
interface App {
  id: string;
  get(route: string): request.Test;
  post(route: string, body?: object): request.Test;
  patch(route: string, body: object): request.Test;
  delete(route: string): request.Test;
}

async function newApp(h: TransactionsHarness): Promise<App> {
  const id = newAppId();
  const { api_key: key } = await apiKeyFor(h, id);
  const auth = (t: request.Test) => t.set('Authorization', `Bearer ${key}`);
  return {
    id,
    get: (route) => auth(request(h.publicApp).get(route)),
    post: (route, body) => {
      const t = auth(request(h.publicApp).post(route));
      return body ? t.send(body) : t;
    },
    patch: (route, body) => auth(request(h.publicApp).patch(route)).send(body),
    delete: (route) => auth(request(h.publicApp).delete(route)),
  };
}

async function addEndpoint(app: App, body: Record<string, unknown>): Promise<Endpoint> {
  const res = await app.post(BASE, body);
  expect(res.status).toBe(201);
  return res.body;
}

const deliveriesOf = async (app: App, id: string): Promise<Delivery[]> => {
  const res = await app.get(`${BASE}/${id}/deliveries`);
  expect(res.status).toBe(200);
  // a page, as every list of the app API (issue 44): the first one holds them all here
  expect(res.body.next_cursor).toBeNull();
  return res.body.data;
};

const settledAll = (app: App, id: string, count: number) =>
  eventually(async () => {
    const all = await deliveriesOf(app, id);
    return all.length === count && all.every((d) => d.status !== 'pending') ? all : undefined;
  });

const setStatus = (h: TransactionsHarness, id: string, status: string) =>
  h.admin('post', `/transactions/${id}/status`).send({ status }).expect(200);
const ofType = (type: string) => (r: Received) => eventOf(r).type === type;

describe('webhook endpoints an app manages with its API key', () => {
  let h: TransactionsHarness;
  let receiver: WebhookReceiver;
  let other: WebhookReceiver;

  beforeAll(async () => {
    h = await transactionsHarness(ENV);
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(async () => {
    receiver = await new WebhookReceiver().start();
    other = await new WebhookReceiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
    await other.stop();
  });

  it('creates, lists, reads, updates and removes endpoints; the secret is shown once', async () => {
    const app = await newApp(h);
    const made = await addEndpoint(app, {
      url: receiver.url,
      description: 'orders',
      enabled_events: ['transaction.*'],
    });
    expect(made).toMatchObject({
      webhook_id: expect.stringMatching(/^wh_[0-9a-f]{32}$/),
      app_id: app.id,
      url: receiver.url,
      description: 'orders',
      enabled_events: ['transaction.*'],
      status: 'enabled',
      secret: expect.stringMatching(/^whsec_/),
    });
    const listed = await app.get(BASE).expect(200);
    expect(listed.body).toEqual([expect.objectContaining({ webhook_id: made.webhook_id })]);
    expect(JSON.stringify(listed.body)).not.toContain(made.secret);
    const one = await app.get(`${BASE}/${made.webhook_id}`).expect(200);
    expect(one.body).not.toHaveProperty('secret');

    const changed = await app
      .patch(`${BASE}/${made.webhook_id}`, { url: other.url, description: null, enabled_events: [] })
      .expect(200);
    expect(changed.body).toMatchObject({ url: other.url, description: null, enabled_events: [] });
    const [row] = await h.storage.db.query<{ url: string; enabled_events: string[] | null }>(
      'SELECT url, enabled_events FROM webhook_endpoints WHERE id = $1',
      [made.webhook_id],
    );
    expect(row).toEqual({ url: other.url, enabled_events: null });

    const rotated = await app.post(`${BASE}/${made.webhook_id}/rotate-secret`).expect(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(made.secret);

    for (const [body, attribute] of [
      [{ url: receiver.url, enabled_events: ['transaction.paid'] }, 'enabled_events'],
      [{ url: receiver.url, enabled_events: ['nope.*'] }, 'enabled_events'],
      [{ url: 'ftp://example.com/' }, 'url'],
      [{ url: receiver.url, enabled_events: 'transaction.mined' }, 'enabled_events'],
    ] as const) {
      const bad = await app.post(BASE, body).expect(400);
      expect(bad.body).toMatchObject({ code: 'invalid_parameter', attribute });
    }
    const unknown = await app.post(BASE, { url: receiver.url, enabled_events: ['transaction.paid'] }).expect(400);
    expect(unknown.body.detail).toMatch(/^enabled_events has an unknown event type "transaction.paid"/);
    const empty = await app.patch(`${BASE}/${made.webhook_id}`, {}).expect(400);
    expect(empty.body.code).toBe('invalid_parameter');
    await app.post(BASE).set('Content-Type', 'text/plain').send('x').expect(400);

    const removed = await app.delete(`${BASE}/${made.webhook_id}`).expect(200);
    expect(removed.body).toMatchObject({ webhook_id: made.webhook_id, removed: true });
    expect((await app.get(BASE).expect(200)).body).toEqual([]);
    await app.get(`${BASE}/${made.webhook_id}`).expect(404);

    const audit = await h.storage.db.query<{ type: string; actor_type: string }>(
      'SELECT type, actor_type FROM audit_events WHERE subject = $1 ORDER BY id',
      [made.webhook_id],
    );
    expect(audit.map((a) => a.type)).toEqual([
      'webhook.added',
      'webhook.updated',
      'webhook.secret_rotated',
      'webhook.removed',
    ]);
    expect(audit.every((a) => a.actor_type === 'app')).toBe(true);
  });

  it('delivers an event only to the endpoints whose filter matches it (none or empty: every event)', async () => {
    const app = await newApp(h);
    const minedOnly = await addEndpoint(app, { url: receiver.url, enabled_events: ['transaction.mined'] });
    const all = await addEndpoint(app, { url: other.url });
    const t = await recordTransaction(h, app.id);
    await setStatus(h, t.transaction_id, 'mined');
    const got = await other.waitFor(2);
    expect(got.map((r) => eventOf(r).type).sort()).toEqual(['transaction.created', 'transaction.mined']);
    const [mined] = await receiver.waitFor(1);
    expect(new Webhook(minedOnly.secret).verify(mined.body, mined.headers)).toMatchObject({
      version: '2026-11-27',
      type: 'transaction.mined',
      data: { transaction_id: t.transaction_id, token_amount: '1500000', status_reason: null },
    });
    await settledAll(app, all.webhook_id, 2);
    // each endpoint's delivery is recorded on its own: wait for this one's outcome too
    expect(await settledAll(app, minedOnly.webhook_id, 1)).toEqual([
      expect.objectContaining({ event_type: 'transaction.mined', status: 'succeeded' }),
    ]);
    expect(receiver.received).toHaveLength(1);
  });

  it('sends a test event, marked as a test and signed, to that endpoint only; not in the events list', async () => {
    const app = await newApp(h);
    const hook = await addEndpoint(app, { url: receiver.url, enabled_events: ['transaction.mined'] });
    await addEndpoint(app, { url: other.url });
    const sent = await app.post(`${BASE}/${hook.webhook_id}/test`).expect(202);
    expect(sent.body).toEqual({
      webhook_id: hook.webhook_id,
      event_id: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
      type: 'webhook.test',
    });
    const [r] = await receiver.waitFor(1);
    expect(r.headers['webhook-id']).toBe(sent.body.event_id);
    expect(new Webhook(hook.secret).verify(r.body, r.headers)).toEqual({
      version: '2026-11-27',
      type: 'webhook.test',
      timestamp: expect.any(String),
      test: true,
      data: { webhook_id: hook.webhook_id, message: expect.any(String) },
    });
    const [delivery] = await settledAll(app, hook.webhook_id, 1);
    expect(delivery).toMatchObject({ event_id: sent.body.event_id, event_type: 'webhook.test', status: 'succeeded' });
    expect(delivery.log).toEqual([expect.objectContaining({ attempt: 1, status_code: 200 })]);
    expect((await app.get('/api/v2/client/events').expect(200)).body.data).toEqual([]);
    await app.get(`/api/v2/client/events/${sent.body.event_id}`).expect(404);
    expect(other.received).toHaveLength(0);

    await app.post(`${BASE}/${hook.webhook_id}/disable`).expect(200);
    const refused = await app.post(`${BASE}/${hook.webhook_id}/test`).expect(409);
    expect(refused.body).toMatchObject({ code: 'webhook_disabled', attribute: 'webhook_id' });
  });

  it('disable queues nothing for the endpoint; enable again keeps its secret and its delivery log', async () => {
    const app = await newApp(h);
    const hook = await addEndpoint(app, { url: receiver.url });
    await recordTransaction(h, app.id);
    await settledAll(app, hook.webhook_id, 1);

    const disabled = await app.post(`${BASE}/${hook.webhook_id}/disable`).expect(200);
    expect(disabled.body).toMatchObject({
      status: 'disabled',
      disabled_at: expect.any(String),
      disabled_reason: 'disabled by the app',
    });
    await recordTransaction(h, app.id);
    const [count] = await h.storage.db.query<{ n: string }>(
      'SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = $1',
      [hook.webhook_id],
    );
    expect(Number(count.n)).toBe(1);

    const enabled = await app.patch(`${BASE}/${hook.webhook_id}`, { enabled: true }).expect(200);
    expect(enabled.body).toMatchObject({ status: 'enabled', disabled_at: null, disabled_reason: null });
    expect(enabled.body).not.toHaveProperty('secret');
    expect(await deliveriesOf(app, hook.webhook_id)).toHaveLength(1);
    const t = await recordTransaction(h, app.id);
    const [, later] = await receiver.waitFor(2);
    // the receiver still verifies with the secret it was given when the endpoint was made
    expect(new Webhook(hook.secret).verify(later.body, later.headers)).toMatchObject({
      type: 'transaction.created',
      data: { transaction_id: t.transaction_id },
    });
    const audit = await h.storage.db.query<{ type: string }>(
      "SELECT type FROM audit_events WHERE subject = $1 AND type IN ('webhook.disabled', 'webhook.updated') ORDER BY id",
      [hook.webhook_id],
    );
    expect(audit.map((a) => a.type)).toEqual(['webhook.disabled', 'webhook.updated']);
  });

  it('recover since T delivers again only the events whose delivery to this endpoint failed', async () => {
    const app = await newApp(h);
    const hook = await addEndpoint(app, { url: receiver.url });
    const since = new Date(Date.now() - 1000).toISOString();
    // the receiver fails this reference's deliveries from before it is recorded (its first delivery may
    // arrive before the next line of the test runs)
    const reference = `will-fail-${Math.random().toString(36).slice(2)}`;
    let down = true;
    receiver.respond = (r) => ({ status: down && eventOf(r).data.reference === reference ? 500 : 200 });
    const failing = await recordTransaction(h, app.id, { reference });
    const fine = await recordTransaction(h, app.id);
    const log = await settledAll(app, hook.webhook_id, 2);
    const failed = log.find((d) => d.status === 'failed')!;
    expect(failed.attempts).toBe(4);
    expect(log.find((d) => d.status === 'succeeded')).toBeDefined();
    const before = receiver.received.length;

    down = false;
    const recovered = await app.post(`${BASE}/${hook.webhook_id}/recover`, { since }).expect(202);
    expect(recovered.body).toEqual({ webhook_id: hook.webhook_id, since, deliveries: 1 });
    const got = await receiver.waitFor(before + 1);
    const again = got[before];
    expect(again.headers['webhook-id']).toBe(failed.event_id);
    expect(eventOf(again).data.transaction_id).toBe(failing.transaction_id);
    await settledAll(app, hook.webhook_id, 3);
    // nothing failed is left unreceived: recovering again queues nothing
    const none = await app.post(`${BASE}/${hook.webhook_id}/recover`, { since }).expect(202);
    expect(none.body.deliveries).toBe(0);
    const after = await app.post(`${BASE}/${hook.webhook_id}/recover`, { since: new Date().toISOString() });
    expect(after.body.deliveries).toBe(0);
    expect(receiver.received.filter((r) => eventOf(r).data.transaction_id === fine.transaction_id)).toHaveLength(1);
    const bad = await app.post(`${BASE}/${hook.webhook_id}/recover`, { since: 'yesterday' }).expect(400);
    expect(bad.body).toMatchObject({ code: 'invalid_parameter', attribute: 'since' });

    // redeliver one delivery of the log
    const one = await app.post(`${BASE}/${hook.webhook_id}/deliveries/${failed.delivery_id}/redeliver`).expect(202);
    expect(one.body).toMatchObject({ event_id: failed.event_id, status: 'pending', attempts: 0 });
    await receiver.waitFor(before + 2);
  });

  it('a 429 with Retry-After throttles the whole endpoint, not counted as a failure in a row', async () => {
    const app = await newApp(h);
    const hook = await addEndpoint(app, { url: receiver.url });
    receiver.answer({ status: 429, headers: { 'Retry-After': '3600' } });
    await recordTransaction(h, app.id);
    await receiver.waitFor(1);
    const throttled = await eventually(async () => {
      const res = await app.get(`${BASE}/${hook.webhook_id}`).expect(200);
      return res.body.throttled_until ? (res.body as Endpoint) : undefined;
    });
    const hours = (Date.parse(throttled.throttled_until!) - Date.now()) / 3600000;
    expect(hours).toBeGreaterThan(0.95);
    expect(hours).toBeLessThanOrEqual(1);
    expect(throttled).toMatchObject({ status: 'failing', consecutive_failures: 0 });

    // a second event waits: a later event to another app's endpoint is sent, this one is not
    const second = await recordTransaction(h, app.id);
    const canary = await newApp(h);
    await addEndpoint(canary, { url: other.url });
    await recordTransaction(h, canary.id);
    await other.waitFor(1);
    expect(receiver.received).toHaveLength(1);
    const waiting = (await deliveriesOf(app, hook.webhook_id)).filter((d) => d.attempts === 0);
    expect(waiting).toHaveLength(1);

    // once the pause is over, the waiting delivery goes; the throttled one keeps its own retry time (Retry-After)
    await h.storage.db.query(
      "UPDATE webhook_endpoints SET throttled_until = now() - interval '1 second' WHERE id = $1",
      [hook.webhook_id],
    );
    const [, next] = await receiver.waitFor(2);
    expect(eventOf(next).data.transaction_id).toBe(second.transaction_id);
    const retry = (await deliveriesOf(app, hook.webhook_id)).find((d) => d.attempts === 1 && d.status === 'pending');
    expect(retry?.log).toEqual([expect.objectContaining({ status_code: 429 })]);
    const metrics = (await request(h.adminApp).get('/metrics').expect(200)).text;
    expect(metrics).toContain(
      `webhook_delivery_attempts_total{endpoint_id="${hook.webhook_id}",outcome="throttled",service="transactions"} 1`,
    );
  });

  it('reports an endpoint that fails and then is disabled to the app’s other endpoints, the audit trail, the metrics and the list', async () => {
    const app = await newApp(h);
    const broken = await addEndpoint(app, { url: receiver.url });
    const watcher = await addEndpoint(app, { url: other.url, enabled_events: ['webhook_endpoint.*'] });
    receiver.respond = () => ({ status: 500 });
    await recordTransaction(h, app.id);
    // four attempts, the delivery gives up: the endpoint is reported failing
    const [report] = await other.waitFor(1, ofType('webhook_endpoint.failing'));
    expect(new Webhook(watcher.secret).verify(report.body, report.headers)).toMatchObject({
      version: '2026-11-27',
      type: 'webhook_endpoint.failing',
      data: {
        webhook_id: broken.webhook_id,
        url: receiver.url,
        consecutive_failures: 4,
        failing_since: expect.any(String),
        last_status_code: 500,
        last_error: 'HTTP 500',
      },
    });
    expect(receiver.received).toHaveLength(4);
    const listed = await h.admin('get', `/apps/${app.id}/webhooks`).expect(200);
    expect(listed.body.find((e: Endpoint) => e.webhook_id === broken.webhook_id)).toMatchObject({
      status: 'failing',
      consecutive_failures: 4,
    });

    receiver.respond = () => ({ status: 410 });
    await recordTransaction(h, app.id);
    const [disabled] = await other.waitFor(1, ofType('webhook_endpoint.disabled'));
    expect(eventOf(disabled).data).toMatchObject({
      webhook_id: broken.webhook_id,
      disabled_reason: 'the endpoint answered 410 Gone',
      last_status_code: 410,
    });
    // reported once per streak, and never to the endpoint itself
    expect(other.received.filter(ofType('webhook_endpoint.failing'))).toHaveLength(1);
    expect(receiver.received.some((r) => eventOf(r).type.startsWith('webhook_endpoint.'))).toBe(false);
    const audit = await h.storage.db.query<{ type: string; actor_type: string; detail: Record<string, unknown> }>(
      "SELECT type, actor_type, detail FROM audit_events WHERE subject = $1 AND actor_type = 'system' ORDER BY id",
      [broken.webhook_id],
    );
    expect(audit.map((a) => a.type)).toEqual(['webhook.failing', 'webhook.disabled']);
    expect(audit[1].detail).toMatchObject({ app_id: app.id, reason: 'the endpoint answered 410 Gone' });
    const metrics = (await request(h.adminApp).get('/metrics').expect(200)).text;
    for (const state of ['failing', 'disabled'])
      expect(metrics).toContain(
        `webhook_endpoint_reports_total{endpoint_id="${broken.webhook_id}",state="${state}",service="transactions"} 1`,
      );
    // the reports are events of the app too
    const events = await eventually(async () => {
      const data = (await app.get('/api/v2/client/events?type=webhook_endpoint.*').expect(200)).body.data;
      return data.length === 2 ? (data as { type: string }[]) : undefined;
    });
    expect(events.map((e) => e.type)).toEqual(['webhook_endpoint.failing', 'webhook_endpoint.disabled']);

    // enabled again: healthy, with the same secret
    const enabled = await app.post(`${BASE}/${broken.webhook_id}/enable`).expect(200);
    expect(enabled.body).toMatchObject({ status: 'enabled', consecutive_failures: 0, failing_since: null });
  });

  it('lists the app’s events oldest first, page by page with a cursor, filtered by type', async () => {
    const app = await newApp(h);
    const first = await recordTransaction(h, app.id, { status: 'mined' });
    const second = await recordTransaction(h, app.id);
    await setStatus(h, second.transaction_id, 'failed');
    const stored = await h.storage.db.query<{ id: string; type: string; transaction_id: string }>(
      'SELECT id, type, transaction_id FROM webhook_events WHERE app_id = $1',
      [app.id],
    );
    expect(stored).toHaveLength(4);
    // listed once no transaction that began before them is still running (on Postgres, another may be, briefly)
    await eventually(async () =>
      (await app.get('/api/v2/client/events').expect(200)).body.data.length === 4 ? true : undefined,
    );

    const seen: { event_id: string; type: string; payload: { data: Record<string, unknown> } }[] = [];
    let after: string | undefined;
    for (let page = 0; page < 3; page++) {
      const res = await app
        .get('/api/v2/client/events')
        .query({ limit: 3, ...(after ? { after } : {}) })
        .expect(200);
      seen.push(...res.body.data);
      expect(res.body.has_more).toBe(page === 0);
      after = res.body.next_after;
      if (!res.body.has_more) break;
    }
    // created and mined were written in one transaction (one timestamp): still in the order written
    expect(seen.map((e) => [e.payload.data.transaction_id, e.type])).toEqual([
      [first.transaction_id, 'transaction.created'],
      [first.transaction_id, 'transaction.mined'],
      [second.transaction_id, 'transaction.created'],
      [second.transaction_id, 'transaction.failed'],
    ]);
    expect(after).toBe(seen[3].event_id);
    const tail = await app.get('/api/v2/client/events').query({ after }).expect(200);
    expect(tail.body).toEqual({ data: [], has_more: false, next_cursor: after, next_after: after });

    const failedOnly = await app.get('/api/v2/client/events').query({ type: 'transaction.failed' }).expect(200);
    expect(failedOnly.body.data).toHaveLength(1);
    expect(failedOnly.body.data[0].payload).toMatchObject({
      version: '2026-11-27',
      type: 'transaction.failed',
      data: { transaction_id: second.transaction_id, token_amount: '1500000', status_reason: null },
    });
    const one = await app.get(`/api/v2/client/events/${seen[1].event_id}`).expect(200);
    expect(one.body).toEqual(seen[1]);

    const badType = await app.get('/api/v2/client/events').query({ type: 'transaction.paid' }).expect(400);
    expect(badType.body).toMatchObject({ code: 'invalid_parameter', attribute: 'type' });
    const badAfter = await app
      .get('/api/v2/client/events')
      .query({ after: `msg_${'0'.repeat(32)}` })
      .expect(400);
    expect(badAfter.body).toMatchObject({ code: 'invalid_parameter', attribute: 'after' });
    const badLimit = await app.get('/api/v2/client/events').query({ limit: 101 }).expect(400);
    expect(badLimit.body).toMatchObject({ code: 'invalid_parameter', attribute: 'limit' });
  });

  it('keeps each app to its own endpoints and events (404 for another app’s)', async () => {
    const owner = await newApp(h);
    const stranger = await newApp(h);
    const hook = await addEndpoint(owner, { url: receiver.url });
    const own = await addEndpoint(stranger, { url: other.url });
    await recordTransaction(h, owner.id);
    const [delivery] = await settledAll(owner, hook.webhook_id, 1);

    const id = hook.webhook_id;
    for (const res of [
      await stranger.get(`${BASE}/${id}`),
      await stranger.patch(`${BASE}/${id}`, { url: other.url }),
      await stranger.delete(`${BASE}/${id}`),
      await stranger.post(`${BASE}/${id}/test`),
      await stranger.post(`${BASE}/${id}/disable`),
      await stranger.post(`${BASE}/${id}/rotate-secret`),
      await stranger.post(`${BASE}/${id}/recover`, { since: new Date(0).toISOString() }),
      await stranger.get(`${BASE}/${id}/deliveries`),
      await stranger.post(`${BASE}/${id}/deliveries/${delivery.delivery_id}/redeliver`),
      await stranger.get(`/api/v2/client/events/${delivery.event_id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    // another app's delivery through one's own endpoint
    const crossed = await stranger
      .post(`${BASE}/${own.webhook_id}/deliveries/${delivery.delivery_id}/redeliver`)
      .expect(404);
    expect(crossed.body.attribute).toBe('delivery_id');
    expect((await stranger.get(BASE).expect(200)).body.map((e: Endpoint) => e.webhook_id)).toEqual([own.webhook_id]);
    expect((await stranger.get('/api/v2/client/events').expect(200)).body.data).toEqual([]);
    const afterOther = await stranger.get('/api/v2/client/events').query({ after: delivery.event_id }).expect(400);
    expect(afterOther.body.attribute).toBe('after');
    const [row] = await h.storage.db.query<{ url: string; disabled_at: Date | null }>(
      'SELECT url, disabled_at FROM webhook_endpoints WHERE id = $1',
      [id],
    );
    expect(row).toEqual({ url: receiver.url, disabled_at: null });
    await request(h.publicApp).get(BASE).expect(401);
  });

  it('an app has at most 20 endpoints', async () => {
    const app = await newApp(h);
    for (let i = 0; i < 20; i++) await addEndpoint(app, { url: `${receiver.url}/${i}` });
    const refused = await app.post(BASE, { url: receiver.url }).expect(409);
    expect(refused.body).toMatchObject({ code: 'too_many_webhooks', attribute: 'url' });
    expect((await app.get(BASE).expect(200)).body).toHaveLength(20);
  });

  it('the operator API changes the same endpoints: filter, disable, enable', async () => {
    const app = await newApp(h);
    const hook = await addEndpoint(app, { url: receiver.url });
    const patched = await h.admin('post', `/webhooks/${hook.webhook_id}/disable`).expect(200);
    expect(patched.body).toMatchObject({ status: 'disabled', disabled_reason: 'disabled by an operator' });
    expect((await app.get(`${BASE}/${hook.webhook_id}`).expect(200)).body.status).toBe('disabled');
    await h.admin('post', `/webhooks/${hook.webhook_id}/enable`).expect(200);
    const res = await request(h.adminApp)
      .patch(`/admin/webhooks/${hook.webhook_id}`)
      .set('Authorization', 'Bearer test-admin-token-0123456789abcdef')
      .send({ enabled_events: ['transaction.failed'] })
      .expect(200);
    expect(res.body).toMatchObject({ enabled_events: ['transaction.failed'], status: 'enabled' });
    expect((await app.get(`${BASE}/${hook.webhook_id}`).expect(200)).body.enabled_events).toEqual([
      'transaction.failed',
    ]);
  });
});

describe('webhook retention', () => {
  it('purges events and delivery logs past retention by itself, batch by batch, never an event still to be sent', async () => {
    const db = await testDatabase('transactions', MIGRATIONS);
    try {
      const appId = newAppId();
      await db.query(
        "INSERT INTO webhook_endpoints (id, app_id, url, secret_enc) VALUES ('wh_1', $1, 'http://127.0.0.1:9/', 'v1.x')",
        [appId],
      );
      const event = (id: string, daysAgo: number) =>
        db.query(
          "INSERT INTO webhook_events (id, app_id, type, body, created_at) VALUES ($1, $2, 'transaction.created', '{}', now() - $3 * interval '1 day')",
          [id, appId, daysAgo],
        );
      const delivery = (id: string, eventId: string, status: string, daysAgo: number) =>
        db.query(
          "INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, created_at, next_attempt_at) VALUES ($1, $2, 'wh_1', $3, now() - $4 * interval '1 day', now() + interval '1 day')",
          [id, eventId, status, daysAgo],
        );
      await event('old-sent', 40);
      await delivery('d-old-sent', 'old-sent', 'succeeded', 40);
      await event('old-waiting', 40);
      await delivery('d-old-waiting', 'old-waiting', 'pending', 40);
      await event('recent', 3);
      await delivery('d-recent-old-log', 'recent', 'failed', 10);
      await delivery('d-recent', 'recent', 'succeeded', 3);
      for (let i = 0; i < 5; i++) await event(`old-${i}`, 31);

      // a small batch takes several rounds: the six events older than 30 days that nothing waits to send
      expect(await purgeWebhookHistory(db, { eventDays: 30, deliveryDays: 35 }, new Date(), 2)).toEqual({
        events: 6,
        deliveries: 0,
      });
      await event('old-late', 31);
      // the service purges by itself when it starts
      const h = await transactionsHarness(
        { ...ENV, WEBHOOK_EVENT_RETENTION_DAYS: '30', WEBHOOK_DELIVERY_RETENTION_DAYS: '7' },
        { db },
      );
      try {
        // the purge runs events and delivery logs in turn: wait for both to be done
        const { events, deliveries } = await eventually(async () => {
          const e = await db.query<{ id: string }>('SELECT id FROM webhook_events ORDER BY id');
          const d = await db.query<{ id: string }>('SELECT id FROM webhook_deliveries ORDER BY id');
          return e.length === 2 && d.length === 2
            ? { events: e.map((r) => r.id), deliveries: d.map((r) => r.id) }
            : undefined;
        });
        expect(events).toEqual(['old-waiting', 'recent']);
        expect(deliveries).toEqual(['d-old-waiting', 'd-recent']);
      } finally {
        await h.close();
      }
    } finally {
      await db.close();
    }
  });

  it('reads WEBHOOK_EVENT_RETENTION_DAYS and WEBHOOK_DELIVERY_RETENTION_DAYS', async () => {
    const { loadTransactionsConfig } = await import('../src/config');
    const env = { DATA_DIR: '/nonexistent', API_KEY_SECRET: 'api-key-test-secret-0123456789abcdef', ...ENV };
    const config = loadTransactionsConfig({ ...env, WEBHOOK_EVENT_RETENTION_DAYS: '10' });
    expect([config.WEBHOOK_EVENT_RETENTION_DAYS, config.webhookDeliveryRetentionDays]).toEqual([10, 10]);
    const both = loadTransactionsConfig({ ...env, WEBHOOK_DELIVERY_RETENTION_DAYS: '7' });
    expect([both.WEBHOOK_EVENT_RETENTION_DAYS, both.webhookDeliveryRetentionDays]).toEqual([30, 7]);
    expect(() => loadTransactionsConfig({ ...env, WEBHOOK_DELIVERY_RETENTION_DAYS: '0' })).toThrow(
      /WEBHOOK_DELIVERY_RETENTION_DAYS must be a whole number of days from 1 to 3650/,
    );
  });
});
