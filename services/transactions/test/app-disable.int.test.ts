import { randomHex, replicaPair, testLogger, valueWithin, type Replicas } from '@attest/testing';
import { DeliveryWorker } from '../src/webhooks/delivery-worker';
import { WebhookMetrics } from '../src/webhooks/webhook-metrics';
import {
  apiKeyFor,
  lookupTransaction,
  newAppId,
  postTransaction,
  receiveAt,
  recordTransaction,
  transactionsHarness,
  type TransactionsHarness,
} from './support';
import { eventOf, WebhookReceiver, type Received } from './support/webhook-receiver';

const KEY_ENCRYPTION_KEY = 'webhook-test-key-encryption-key-0123456789';
const ENV = {
  KEY_ENCRYPTION_KEY,
  WEBHOOK_RETRY_SCHEDULE: '0,0,1',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  AUTH_FAILURES_PER_ID_AND_ADDRESS: '3',
};

const DISABLED = {
  code: 'unauthenticated',
  detail: "This API key's app is disabled; it works again once an operator enables the app.",
  attribute: null,
};

/** Polls up to 2 s for the expected value; returns the last one seen. */
const eventuallyEqual = <T>(read: () => Promise<T>, expected: T) => valueWithin(2000, read, expected);

/** Each app's own receiving address (one app receives at an address). */
const receivingAddressOf = (appId: string) => `0x${appId.slice(4)}${'c'.repeat(8)}`;

const payment = (appId: string, reference: string) => ({
  app_id: appId,
  type: 'pay',
  reference,
  transaction_hash: `0x${randomHex(32)}`,
  chain: 'worldchain',
  token: 'USDCE',
  to: receivingAddressOf(appId),
  token_amount: '2500000',
  from: `0x${'d'.repeat(40)}`,
});

/** Issue 23, item 12: a disabled app's API keys get 401 and its webhook endpoints stop, until it is enabled again. */
describe('disabling an app stops its API keys and its webhooks', () => {
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

  it('its keys get 401 (not counted as failures) at the lookup and the record, until it is enabled; other apps are untouched', async () => {
    const appId = newAppId();
    const key = await apiKeyFor(h, appId);
    const second = await apiKeyFor(h, appId);
    const otherApp = newAppId();
    const otherKey = await apiKeyFor(h, otherApp);
    await receiveAt(h, appId, receivingAddressOf(appId));
    await receiveAt(h, otherApp, receivingAddressOf(otherApp));
    const tx = await recordTransaction(h, appId);
    // warm: the key is served from memory
    expect((await lookupTransaction(h, key.api_key, tx.transaction_id, appId)).status).toBe(200);

    const disabled = await h.admin('post', `/apps/${appId}/disable`);
    expect(disabled.status).toBe(200);
    expect(disabled.body).toEqual({ app_id: appId, disabled: true, disabled_at: expect.any(String) });
    expect((await h.admin('post', `/apps/${appId}/disable`)).body).toEqual(disabled.body); // idempotent
    expect((await h.admin('get', `/apps/${appId}`)).body).toEqual(disabled.body);

    // more refusals than the failure limit (3 here): each is 401, never 429, since the key is right
    for (let i = 0; i < 5; i++) {
      const refused = await lookupTransaction(h, key.api_key, tx.transaction_id, appId);
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual(DISABLED);
      expect(refused.headers['www-authenticate']).toBe('Bearer realm="attest-api", error="invalid_token"');
    }
    const recorded = await postTransaction(h, second.api_key, payment(appId, 'while-disabled'));
    expect(recorded.status).toBe(401);
    expect(recorded.body).toEqual(DISABLED);
    // a key made while the app is disabled is disabled too
    const later = await apiKeyFor(h, appId);
    expect((await lookupTransaction(h, later.api_key, tx.transaction_id, appId)).status).toBe(401);
    // another app's key still works; a wrong secret is still counted and told apart
    expect((await postTransaction(h, otherKey.api_key, payment(otherApp, 'other'))).status).toBe(201);
    const [stored] = await h.storage.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM transactions WHERE app_id = $1 AND reference = 'while-disabled'",
      [appId],
    );
    expect(Number(stored.n)).toBe(0);

    const enabled = await h.admin('post', `/apps/${appId}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toEqual({ app_id: appId, disabled: false, disabled_at: null });
    expect((await lookupTransaction(h, key.api_key, tx.transaction_id, appId)).status).toBe(200);
    expect((await postTransaction(h, second.api_key, payment(appId, 'after'))).status).toBe(201);
    expect((await lookupTransaction(h, later.api_key, tx.transaction_id, appId)).status).toBe(200);

    const audit = await h.storage.db.query<{ type: string }>(
      "SELECT type FROM audit_events WHERE subject = $1 AND type LIKE 'app.%' ORDER BY id",
      [appId],
    );
    expect(audit.map((a) => a.type)).toEqual(['app.disabled', 'app.disabled', 'app.enabled']);
  });

  it('its webhook deliveries wait while it is disabled, and go out once it is enabled', async () => {
    const appId = newAppId();
    const hook = await h.admin('post', `/apps/${appId}/webhooks`).send({ url: receiver.url });
    expect(hook.status).toBe(201);
    expect((await h.admin('post', `/apps/${appId}/disable`)).status).toBe(200);
    const tx = await recordTransaction(h, appId);
    await h.admin('post', `/transactions/${tx.transaction_id}/status`).send({ status: 'mined' }).expect(200);

    // a delivery worker's pass (any replica's) leases nothing of a disabled app
    const worker = new DeliveryWorker(
      h.storage.db,
      {
        keyEncryptionKey: KEY_ENCRYPTION_KEY,
        retrySchedule: [0],
        targets: { allowHttp: true, allowPrivate: true, allowPrivateSetting: 'WEBHOOK_ALLOW_PRIVATE' },
        intervalMs: 60000,
      },
      new WebhookMetrics(),
      testLogger,
    );
    await worker.pass();
    const ofTx = (r: Received) => eventOf(r).data.transaction_id === tx.transaction_id;
    expect(receiver.received.filter(ofTx)).toEqual([]);
    const waiting = await h.admin('get', `/webhooks/${hook.body.webhook_id}/deliveries`);
    expect(waiting.body.map((d: { status: string; attempts: number }) => [d.status, d.attempts])).toEqual([
      ['pending', 0],
      ['pending', 0],
    ]);

    expect((await h.admin('post', `/apps/${appId}/enable`)).status).toBe(200);
    await worker.pass();
    const got = await receiver.waitFor(2, ofTx);
    expect(got.map((r) => eventOf(r).type).sort()).toEqual(['transaction.created', 'transaction.mined']);
  });

  it('app_id is checked', async () => {
    const res = await h.admin('post', '/apps/nope/disable');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_parameter', attribute: 'app_id' });
  });
});

describe('disabling an app on one replica', () => {
  let a: TransactionsHarness;
  let b: TransactionsHarness;
  let replicas: Replicas<TransactionsHarness>;
  beforeAll(async () => {
    // a second replica: same database and invalidation bus (see replicaPair)
    replicas = await replicaPair('transactions', (shared) => transactionsHarness({}, shared));
    ({ a, b } = replicas);
  });
  afterAll(() => replicas?.close());

  it('is refused by the other, whose memory held the key, and enabling it there works again', async () => {
    const appId = newAppId();
    const key = await apiKeyFor(a, appId);
    const tx = await recordTransaction(a, appId);
    expect((await lookupTransaction(b, key.api_key, tx.transaction_id, appId)).status).toBe(200);
    await a.admin('post', `/apps/${appId}/disable`).expect(200);
    const status = () => lookupTransaction(b, key.api_key, tx.transaction_id, appId).then((r) => r.status);
    expect(await eventuallyEqual(status, 401)).toBe(401);
    await a.admin('post', `/apps/${appId}/enable`).expect(200);
    expect(await eventuallyEqual(status, 200)).toBe(200);
  });
});
