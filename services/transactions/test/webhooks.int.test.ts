import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { createDatabase, type Db } from '@attest/common';
import { testDatabase, testLogger } from '@attest/testing';
import {
  apiKeyFor,
  newAppId,
  postTransaction,
  receiveAt,
  recordTransaction,
  transactionsHarness,
  type TransactionsHarness,
} from './support';
import { eventOf, eventually, WebhookReceiver, type Received } from './support/webhook-receiver';

const KEY_ENCRYPTION_KEY = 'webhook-test-key-encryption-key-0123456789';
const ENV = {
  KEY_ENCRYPTION_KEY,
  WEBHOOK_RETRY_SCHEDULE: '0,0,1',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_ALLOW_PRIVATE: 'true',
};
const MIGRATIONS = path.join(__dirname, '..', 'migrations');

interface Delivery {
  delivery_id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_error: string | null;
  log: { attempt: number; status_code: number | null; error: string | null; latency_ms: number }[];
}

async function addWebhook(
  h: TransactionsHarness,
  appId: string,
  url: string,
): Promise<{ webhook_id: string; secret: string }> {
  const res = await h.admin('post', `/apps/${appId}/webhooks`).send({ url });
  expect(res.status).toBe(201);
  return res.body;
}

const deliveries = async (h: TransactionsHarness, webhookId: string): Promise<Delivery[]> => {
  const res = await h.admin('get', `/webhooks/${webhookId}/deliveries`);
  expect(res.status).toBe(200);
  return res.body;
};

/** Polls the delivery log until the delivery of `eventId` is no longer pending. */
const settled = (h: TransactionsHarness, webhookId: string, eventId: string) =>
  eventually(async () =>
    (await deliveries(h, webhookId)).find((d) => d.event_id === eventId && d.status !== 'pending'),
  );

const setStatus = (h: TransactionsHarness, id: string, status: string) =>
  h.admin('post', `/transactions/${id}/status`).send({ status }).expect(200);
const ofTransaction = (id: string) => (r: Received) => eventOf(r).data.transaction_id === id;

describe('webhooks', () => {
  let h: TransactionsHarness;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    h = await transactionsHarness(ENV);
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
  });

  it('sends created, mined and failed events, signed so that standardwebhooks verifies them; stores the secret sealed', async () => {
    const appId = newAppId();
    const hook = await addWebhook(h, appId, receiver.url);
    expect(hook).toMatchObject({
      webhook_id: expect.stringMatching(/^wh_[0-9a-f]{32}$/),
      url: receiver.url,
      app_id: appId,
      secret: expect.stringMatching(/^whsec_/),
    });
    const listed = await h.admin('get', `/apps/${appId}/webhooks`).expect(200);
    expect(listed.body).toEqual([
      expect.objectContaining({ webhook_id: hook.webhook_id, url: receiver.url, disabled_at: null }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(hook.secret);
    const [stored] = await h.storage.db.query<{ secret_enc: string }>(
      'SELECT secret_enc FROM webhook_endpoints WHERE id = $1',
      [hook.webhook_id],
    );
    expect(stored.secret_enc).toMatch(/^v1\./);
    expect(stored.secret_enc).not.toContain(hook.secret.slice(6, 20));

    const mined = await recordTransaction(h, appId);
    const minedAnswer = await setStatus(h, mined.transaction_id, 'mined');
    const failed = await recordTransaction(h, appId);
    await setStatus(h, failed.transaction_id, 'failed');

    const got = await receiver.waitFor(4);
    const verifier = new Webhook(hook.secret);
    for (const r of got) {
      expect(verifier.verify(r.body, r.headers)).toEqual(JSON.parse(r.body));
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    }
    const byTx = (id: string) => got.filter(ofTransaction(id)).map((r) => eventOf(r));
    expect(
      byTx(mined.transaction_id)
        .map((e) => e.type)
        .sort(),
    ).toEqual(['transaction.created', 'transaction.mined']);
    expect(
      byTx(failed.transaction_id)
        .map((e) => e.type)
        .sort(),
    ).toEqual(['transaction.created', 'transaction.failed']);
    const minedEvent = byTx(mined.transaction_id).find((e) => e.type === 'transaction.mined')!;
    const { type: _type, ...spec } = minedAnswer.body as Record<string, string>;
    // the lookup's fields, with the reason (null: none) in the payload rather than a header
    expect(minedEvent.data).toEqual({ ...spec, status_reason: null });
    expect(minedEvent.version).toBe('2026-11-27');
    expect(new Date(minedEvent.timestamp).toISOString()).toBe(minedEvent.timestamp);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(4);

    const rows = await h.storage.db.query<{ type: string }>(
      'SELECT type FROM webhook_events WHERE transaction_id = $1 ORDER BY type',
      [mined.transaction_id],
    );
    expect(rows.map((r) => r.type)).toEqual(['transaction.created', 'transaction.mined']);
    const log = await eventually(async () => {
      const all = await deliveries(h, hook.webhook_id);
      return all.length === 4 && all.every((d) => d.status === 'succeeded') ? all : undefined;
    });
    expect(log.map((d) => d.log)).toEqual(
      Array(4).fill([
        expect.objectContaining({ attempt: 1, status_code: 200, error: null, latency_ms: expect.any(Number) }),
      ]),
    );
  });

  it('sends transaction.created once for a payment an app records with its API key, not again for a repeat', async () => {
    const appId = newAppId();
    const hook = await addWebhook(h, appId, receiver.url);
    const key = await apiKeyFor(h, appId);
    await receiveAt(h, appId, `0x${'c'.repeat(40)}`);
    const payment = {
      app_id: appId,
      type: 'pay',
      reference: 'order-api-1',
      transaction_hash: `0x${'2e'.repeat(32)}`,
      chain: 'worldchain',
      token: 'USDCE',
      to: `0x${'c'.repeat(40)}`,
      token_amount: '2500000',
      from: `0x${'d'.repeat(40)}`,
    };
    const first = await postTransaction(h, key.api_key, payment);
    expect(first.status).toBe(201);
    expect((await postTransaction(h, key.api_key, payment)).status).toBe(200);
    const [r] = await receiver.waitFor(1);
    expect(new Webhook(hook.secret).verify(r.body, r.headers)).toEqual({
      version: '2026-11-27',
      type: 'transaction.created',
      timestamp: first.body.timestamp,
      data: { ...first.body, status_reason: null },
    });
    await settled(h, hook.webhook_id, r.headers['webhook-id']);
    const [count] = await h.storage.db.query<{ n: string }>(
      'SELECT count(*) AS n FROM webhook_events WHERE app_id = $1',
      [appId],
    );
    expect(Number(count.n)).toBe(1);
    expect(receiver.received).toHaveLength(1);
  });

  it('retries a receiver that answers 500 twice: the third attempt delivers, with the same webhook-id', async () => {
    const appId = newAppId();
    const hook = await addWebhook(h, appId, receiver.url);
    receiver.answer({ status: 500 }, { status: 500 });
    const t = await recordTransaction(h, appId);
    const got = await receiver.waitFor(3, ofTransaction(t.transaction_id));
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of got)
      expect(new Webhook(hook.secret).verify(r.body, r.headers)).toMatchObject({ type: 'transaction.created' });
    const done = await settled(h, hook.webhook_id, got[0].headers['webhook-id']);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 3 });
    expect(done.log.map((a) => a.status_code)).toEqual([500, 500, 200]);
    expect(receiver.received).toHaveLength(3);
  });

  it('honours Retry-After on 503; redeliver sends the event again with the same webhook-id', async () => {
    const appId = newAppId();
    const hook = await addWebhook(h, appId, receiver.url);
    receiver.answer({ status: 503, headers: { 'Retry-After': '3600' } });
    const t = await recordTransaction(h, appId);
    const [first] = await receiver.waitFor(1, ofTransaction(t.transaction_id));
    const waiting = await eventually(async () => (await deliveries(h, hook.webhook_id)).find((d) => d.attempts === 1));
    const [row] = await h.storage.db.query<{ later: boolean }>(
      "SELECT next_attempt_at > now() + interval '50 minutes' AS later FROM webhook_deliveries WHERE id = $1",
      [waiting.delivery_id],
    );
    expect(row.later).toBe(true);
    expect(waiting).toMatchObject({ status: 'pending', last_error: 'HTTP 503' });

    const again = await h.admin('post', `/webhook-deliveries/${waiting.delivery_id}/redeliver`).expect(202);
    expect(again.body).toMatchObject({ event_id: first.headers['webhook-id'], status: 'pending', attempts: 0 });
    const got = await receiver.waitFor(2);
    expect(got[1].headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(got[1].body).toBe(first.body);
    await h.admin('post', '/webhook-deliveries/whd_00000000000000000000000000000000/redeliver').expect(404);
    const bad = await h.admin('post', '/webhook-deliveries/nope/redeliver').expect(400);
    expect(bad.body).toMatchObject({ code: 'invalid_parameter', attribute: 'delivery_id' });
  });

  it('disables an endpoint that answers 410 and sends it nothing more', async () => {
    const appId = newAppId();
    const hook = await addWebhook(h, appId, receiver.url);
    receiver.answer({ status: 410 });
    const t = await recordTransaction(h, appId);
    const [gone] = await receiver.waitFor(1);
    const done = await settled(h, hook.webhook_id, gone.headers['webhook-id']);
    expect(done).toMatchObject({ status: 'failed', attempts: 1 });
    const listed = await h.admin('get', `/apps/${appId}/webhooks`).expect(200);
    expect(listed.body[0]).toMatchObject({
      disabled_at: expect.any(String),
      disabled_reason: 'the endpoint answered 410 Gone',
    });
    await setStatus(h, t.transaction_id, 'mined');
    const [count] = await h.storage.db.query<{ n: string }>(
      'SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = $1',
      [hook.webhook_id],
    );
    expect(Number(count.n)).toBe(1);
    expect(receiver.received).toHaveLength(1);
  });

  it('disables an endpoint that has failed for 5 days at its next failure', async () => {
    const appId = newAppId();
    const hook = await addWebhook(h, appId, receiver.url);
    await h.storage.db.query(
      "UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1",
      [hook.webhook_id],
    );
    receiver.answer({ status: 500 });
    await recordTransaction(h, appId);
    const [r] = await receiver.waitFor(1);
    expect(await settled(h, hook.webhook_id, r.headers['webhook-id'])).toMatchObject({ status: 'failed', attempts: 1 });
    const listed = await h.admin('get', `/apps/${appId}/webhooks`).expect(200);
    expect(listed.body[0]).toMatchObject({
      disabled_at: expect.any(String),
      disabled_reason: 'the endpoint failed for 5 days',
    });
  });

  it('signs with both secrets for 24 hours after a rotation', async () => {
    const appId = newAppId();
    const hook = await addWebhook(h, appId, receiver.url);
    const rotated = await h.admin('post', `/webhooks/${hook.webhook_id}/rotate-secret`).expect(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(hook.secret);
    const overlapHours = (Date.parse(rotated.body.previous_secret_expires_at) - Date.now()) / 3600000;
    expect(overlapHours).toBeGreaterThan(23.9);
    expect(overlapHours).toBeLessThanOrEqual(24);
    await recordTransaction(h, appId);
    const [r] = await receiver.waitFor(1);
    expect(r.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(hook.secret).verify(r.body, r.headers)).toMatchObject({ type: 'transaction.created' });
    expect(new Webhook(rotated.body.secret).verify(r.body, r.headers)).toMatchObject({ type: 'transaction.created' });

    await h.storage.db.query(
      "UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1",
      [hook.webhook_id],
    );
    await recordTransaction(h, appId);
    const [, later] = await receiver.waitFor(2);
    expect(later.headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(() => new Webhook(hook.secret).verify(later.body, later.headers)).toThrow();
    expect(new Webhook(rotated.body.secret).verify(later.body, later.headers)).toMatchObject({
      type: 'transaction.created',
    });
  });

  it('replays the events since a time with their webhook-ids; remove stops deliveries', async () => {
    const appId = newAppId();
    const before = new Date(Date.now() - 1000).toISOString();
    const t = await recordTransaction(h, appId);
    await setStatus(h, t.transaction_id, 'mined');
    const hook = await addWebhook(h, appId, receiver.url);
    const replay = await h.admin('post', `/apps/${appId}/webhooks/replay`).send({ since: before }).expect(202);
    expect(replay.body).toMatchObject({ app_id: appId, deliveries: 2, events: 2 });
    const got = await receiver.waitFor(2);
    expect(got.map((r) => eventOf(r).type).sort()).toEqual(['transaction.created', 'transaction.mined']);
    const stored = await h.storage.db.query<{ id: string }>('SELECT id FROM webhook_events WHERE transaction_id = $1', [
      t.transaction_id,
    ]);
    expect(got.map((r) => r.headers['webhook-id']).sort()).toEqual(stored.map((e) => e.id).sort());

    const bad = await h.admin('post', `/apps/${appId}/webhooks/replay`).send({ since: 'yesterday' }).expect(400);
    expect(bad.body).toMatchObject({ code: 'invalid_parameter', attribute: 'since' });
    const removed = await h.admin('delete', `/webhooks/${hook.webhook_id}`).expect(200);
    expect(removed.body).toMatchObject({ webhook_id: hook.webhook_id, removed: true });
    expect((await h.admin('get', `/apps/${appId}/webhooks`).expect(200)).body).toEqual([]);
    await recordTransaction(h, appId);
    await h.admin('get', `/webhooks/${hook.webhook_id}/deliveries`).expect(404);
  });

  it('refuses bad endpoint URLs with a sentence naming url', async () => {
    const appId = newAppId();
    for (const [url, detail] of [
      ['http://example.com/hooks', /^url must be https/],
      ['ftp://example.com/', /^url must be an https URL/],
      ['not a url', /^url must be an absolute https URL/],
    ] as const) {
      const res = await h.admin('post', `/apps/${appId}/webhooks`).send({ url }).expect(400);
      expect(res.body).toMatchObject({
        code: 'invalid_parameter',
        attribute: 'url',
        detail: expect.stringMatching(detail),
      });
    }
    const missing = await h.admin('post', `/apps/${appId}/webhooks`).send({}).expect(400);
    expect(missing.body).toMatchObject({ code: 'required', attribute: 'url' });
    const badApp = await h.admin('post', '/apps/nope/webhooks').send({ url: receiver.url }).expect(400);
    expect(badApp.body).toMatchObject({ code: 'invalid_parameter', attribute: 'app_id' });
  });

  it('exposes delivery failures and lag per endpoint on /metrics', async () => {
    const appId = newAppId();
    const hook = await addWebhook(h, appId, receiver.url);
    receiver.answer({ status: 500 });
    await recordTransaction(h, appId);
    const [r] = await receiver.waitFor(2);
    await settled(h, hook.webhook_id, r.headers['webhook-id']);
    const metrics = (await (await import('supertest')).default(h.adminApp).get('/metrics').expect(200)).text;
    expect(metrics).toContain(
      `webhook_delivery_attempts_total{endpoint_id="${hook.webhook_id}",outcome="failure",service="transactions"} 1`,
    );
    expect(metrics).toContain(
      `webhook_delivery_attempts_total{endpoint_id="${hook.webhook_id}",outcome="success",service="transactions"} 1`,
    );
    expect(metrics).toMatch(
      new RegExp(`^webhook_delivery_lag_seconds_count\\{[^}]*endpoint_id="${hook.webhook_id}"[^}]*\\} 1$`, 'm'),
    );
  });
});

describe('webhooks to private addresses, not allowed', () => {
  let h: TransactionsHarness;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    h = await transactionsHarness({ ...ENV, WEBHOOK_ALLOW_PRIVATE: 'false' });
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await receiver?.stop();
    await h?.close();
  });

  it('an IP literal is refused when it is registered, naming url (never tried later)', async () => {
    const appId = newAppId();
    for (const url of [
      receiver.url,
      'https://[::127.0.0.1]/hooks',
      'https://[64:ff9b:1::a00:1]/',
      'https://[2002:a00:1::]/',
      'https://[100::1]/',
    ]) {
      const res = await h.admin('post', `/apps/${appId}/webhooks`).send({ url }).expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_parameter', attribute: 'url' });
      expect(res.body.detail).toMatch(
        /^url must not point to a non-public address .*WEBHOOK_ALLOW_PRIVATE=true allows it\.$/,
      );
    }
  });

  it('a host name is refused on every attempt when it resolves to a private address, and never reaches the receiver', async () => {
    const appId = newAppId();
    const hook = await addWebhook(h, appId, receiver.url.replace('127.0.0.1', 'localhost'));
    await recordTransaction(h, appId);
    const done = await eventually(async () =>
      (await deliveries(h, hook.webhook_id)).find((d) => d.status !== 'pending'),
    );
    expect(done).toMatchObject({ status: 'failed', attempts: 4 });
    for (const a of done.log)
      expect(a).toMatchObject({
        status_code: null,
        error: expect.stringMatching(/^refused: localhost resolves to a non-public address/),
      });
    expect(receiver.received).toHaveLength(0);
  });
});

describe('webhooks with two replicas over one database', () => {
  let a: TransactionsHarness;
  let b: TransactionsHarness;
  let ownDb: Db | undefined;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    a = await transactionsHarness(ENV);
    // On Postgres the second replica has its own pool; embedded PGlite is one process's, so it shares it.
    const url = process.env.TEST_DATABASE_URL;
    ownDb = url ? await createDatabase({ url, schema: a.storage.db.schema, logger: testLogger }) : undefined;
    b = await transactionsHarness(ENV, { db: ownDb ?? a.storage.db });
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await receiver?.stop();
    await b?.close();
    await ownDb?.close();
    await a?.close();
  });

  it('send each event once per attempt, with one webhook-id, and lose none', async () => {
    const appId = newAppId();
    const hook = await addWebhook(a, appId, receiver.url);
    const seen = new Set<string>();
    // each event's first attempt fails, its second succeeds
    receiver.respond = (r) => {
      const id = r.headers['webhook-id'];
      if (seen.has(id)) return { status: 200 };
      seen.add(id);
      return { status: 500 };
    };
    const made = await Promise.all(Array.from({ length: 12 }, (_, i) => recordTransaction(i % 2 ? a : b, appId)));
    await Promise.all(made.slice(0, 6).map((t, i) => setStatus(i % 2 ? b : a, t.transaction_id, 'mined')));
    const expected = 18;
    const log = await eventually(async () => {
      const all = await deliveries(b, hook.webhook_id);
      return all.length === expected && all.every((d) => d.status === 'succeeded') ? all : undefined;
    }, 40000);
    expect(log.every((d) => d.attempts === 2)).toBe(true);
    const counts = new Map<string, number>();
    for (const r of receiver.received)
      counts.set(r.headers['webhook-id'], (counts.get(r.headers['webhook-id']) ?? 0) + 1);
    expect(counts.size).toBe(expected);
    expect([...counts.values()].every((n) => n === 2)).toBe(true);
    // the transaction events (a webhook_endpoint.failing report about this endpoint may be among the app's events)
    const events = await a.storage.db.query<{ id: string }>(
      "SELECT id FROM webhook_events WHERE app_id = $1 AND type LIKE 'transaction.%'",
      [appId],
    );
    expect(new Set(events.map((e) => e.id))).toEqual(new Set(counts.keys()));
  });
});

describe('a service killed between a change and its delivery', () => {
  const run = promisify(execFile);
  let receiver: WebhookReceiver;
  let h: TransactionsHarness | undefined;
  let db: Db | undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-webhook-kill-'));
  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await h?.close();
    await db?.close();
    await receiver?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('delivers the event after a restart', async () => {
    const url = process.env.TEST_DATABASE_URL;
    // Postgres: a fresh schema the child and then the restarted service use; embedded: PGlite files on disk.
    const schemaDb = url ? await testDatabase('transactions', MIGRATIONS, url) : undefined;
    const child = path.join(__dirname, 'support', 'webhook-kill-child.ts');
    const result = await run(process.execPath, ['--import', 'tsx', child], {
      cwd: path.join(__dirname, '..'),
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        CHILD_DATABASE_URL: url ?? '',
        CHILD_SCHEMA: schemaDb?.schema ?? 'transactions',
        CHILD_PG_DIR: url ? '' : path.join(dir, 'pg'),
        RECEIVER_URL: receiver.url,
        KEY_ENCRYPTION_KEY,
      },
    }).then(
      () => {
        throw new Error('the child was expected to be killed');
      },
      (err: { signal?: string; stdout: string; stderr: string }) => err,
    );
    expect(result.signal).toBe('SIGKILL');
    const made = JSON.parse(result.stdout) as {
      app_id: string;
      webhook_id: string;
      secret: string;
      transaction_id: string;
    };
    expect(receiver.received).toHaveLength(0);

    db =
      schemaDb ??
      (await createDatabase({ embeddedDir: path.join(dir, 'pg'), schema: 'transactions', logger: testLogger }));
    h = await transactionsHarness(ENV, { db });
    const [r] = await receiver.waitFor(1);
    expect(new Webhook(made.secret).verify(r.body, r.headers)).toMatchObject({
      type: 'transaction.created',
      data: { transaction_id: made.transaction_id, app_id: made.app_id },
    });
    await settled(h, made.webhook_id, r.headers['webhook-id']);
  }, 180000);
});

describe('stopping with a delivery in flight', () => {
  it('cuts the request short and gives the delivery back, uncounted, for the next worker', async () => {
    const receiver = await new WebhookReceiver().start();
    const db = await testDatabase('transactions', MIGRATIONS);
    try {
      const h = await transactionsHarness(ENV, { db });
      const appId = newAppId();
      const hook = await addWebhook(h, appId, receiver.url);
      receiver.answer({ status: 0, hang: true });
      await recordTransaction(h, appId);
      const [first] = await receiver.waitFor(1);
      await h.close();
      const [row] = await db.query<{ status: string; attempts: number; lease_until: Date | null }>(
        'SELECT status, attempts, lease_until FROM webhook_deliveries WHERE endpoint_id = $1',
        [hook.webhook_id],
      );
      expect(row).toEqual({ status: 'pending', attempts: 0, lease_until: null });

      const next = await transactionsHarness(ENV, { db });
      const [, again] = await receiver.waitFor(2);
      expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
      await settled(next, hook.webhook_id, first.headers['webhook-id']);
      await next.close();
    } finally {
      await receiver.stop();
      await db.close();
    }
  });
});

describe('webhooks with a database (not the embedded mode)', () => {
  let h: TransactionsHarness;
  beforeAll(async () => {
    h = await transactionsHarness({
      ...ENV,
      DATABASE_URL: 'postgres://db.invalid/attest',
      WEBHOOK_ALLOW_PRIVATE: undefined,
    });
  });
  afterAll(() => h?.close());

  it('refuse plain http, even to loopback, and private IP literals, naming url', async () => {
    const appId = newAppId();
    for (const [url, detail] of [
      ['http://127.0.0.1:4101/admin', 'url must be https (plain http only in the embedded development mode).'],
      ['http://localhost:3000/hooks', 'url must be https (plain http only in the embedded development mode).'],
      [
        'https://10.0.0.7/hooks',
        'url must not point to a non-public address (10.0.0.7); WEBHOOK_ALLOW_PRIVATE=true allows it.',
      ],
    ] as const) {
      const res = await h.admin('post', `/apps/${appId}/webhooks`).send({ url }).expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_parameter', attribute: 'url', detail });
    }
    await h.admin('post', `/apps/${appId}/webhooks`).send({ url: 'https://hooks.example.com/attest' }).expect(201);
  });
});
