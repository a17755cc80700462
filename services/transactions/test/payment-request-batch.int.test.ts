import request from 'supertest';
import { AuditLog, type AuditActor } from '@attest/common';
import { testLogger } from '@attest/testing';
import { PaymentRequestService, type PriceSource } from '../src/payment-requests';
import type { CreateRequest } from '../src/payment-requests/create-request';
import { writeEvent } from '../src/webhooks';
import { ADDRESS_B, apiKeyFor, newAppId, receiveAt, transactionsHarness, type TransactionsHarness } from './support';

/** Token-priced creations ask for no price. */
const noPrices: PriceSource = {
  quote: () => Promise.reject(new Error('a token-priced creation asked for a price')),
};

/**
 * Issue 44: the creations of payment requests that arrive together are written in one database
 * transaction (WriteBatcher). Each must still be its own request, with its own event and audit record;
 * the reference stays unique per app, inside a batch too; a request the database refuses fails alone.
 */
describe('payment requests created together', () => {
  let h: TransactionsHarness;
  let service: PaymentRequestService;
  const appId = newAppId();
  const actor: AuditActor = { type: 'app', id: 'key_test', requestId: null, clientAddress: null };

  beforeAll(async () => {
    h = await transactionsHarness();
    service = new PaymentRequestService(h.storage.db, noPrices, h.storage.bus, {
      audit: new AuditLog(h.storage.db, testLogger, { retentionDays: 1 }),
      outbox: writeEvent,
    });
  });
  afterAll(() => h.close());

  let orders = 0;
  const input = (fields: Partial<CreateRequest> = {}): CreateRequest => ({
    appId,
    reference: `order-${++orders}-${Math.random().toString(36).slice(2)}`,
    chain: 'worldchain',
    to: ADDRESS_B,
    expiresInSeconds: null,
    metadata: null,
    returnUrl: null,
    price: { tokenAmount: 1000000n },
    tokens: [{ token: 'USDCE', decimals: 6 }],
    tokensField: 'token',
    ...fields,
  });

  const eventsOf = (ids: string[]) =>
    h.storage.db.query<{ payment_request_id: string; type: string; tx: string; body: string }>(
      'SELECT payment_request_id, type, tx::text AS tx, body FROM webhook_events WHERE payment_request_id = ANY($1) ORDER BY seq',
      [ids],
    );
  const auditOf = (ids: string[]) =>
    h.storage.db.query<{ subject: string; actor: string; detail: { reference: string } }>(
      "SELECT subject, actor, detail FROM audit_events WHERE type = 'payment_request.created' AND subject = ANY($1)",
      [ids],
    );

  it('writes the creations of one turn in one transaction, each its own request, event and audit record', async () => {
    const inputs = Array.from({ length: 12 }, () => input());
    const created = await Promise.all(inputs.map((i) => service.create(i, actor)));
    expect(created.every((c) => c.created)).toBe(true);
    const ids = created.map((c) => c.request.id);
    expect(new Set(ids).size).toBe(12);
    expect(created.map((c) => c.request.reference)).toEqual(inputs.map((i) => i.reference));
    for (const c of created)
      expect(c.view).toMatchObject({ id: c.request.id, status: 'pending', amount_due: '1000000' });
    const stored = await h.storage.db.query<{ id: string; reference: string; amount_due: string }>(
      'SELECT id, reference, amount_due::text FROM payment_requests WHERE id = ANY($1)',
      [ids],
    );
    expect(new Map(stored.map((r) => [r.id, r.reference]))).toEqual(
      new Map(created.map((c) => [c.request.id, c.request.reference])),
    );
    const events = await eventsOf(ids);
    // one payment_request.created each, in the order the creations came, all from one database transaction
    expect(events.map((e) => [e.payment_request_id, e.type])).toEqual(ids.map((id) => [id, 'payment_request.created']));
    expect(new Set(events.map((e) => e.tx)).size).toBe(1);
    for (const [i, e] of events.entries())
      expect(JSON.parse(e.body)).toMatchObject({
        type: 'payment_request.created',
        data: { id: ids[i], reference: inputs[i].reference },
      });
    const audit = await auditOf(ids);
    expect(audit.map((a) => a.subject).sort()).toEqual([...ids].sort());
    for (const a of audit)
      expect(a).toMatchObject({ actor: 'key_test', detail: { reference: expect.stringMatching(/^order-/) } });
  });

  it('keeps the reference unique inside a batch: the same creation answers the one created, another is 409', async () => {
    const same = input();
    const other = input();
    const [a, b, c, d] = await Promise.allSettled([
      service.create(same, actor),
      service.create({ ...same }, actor),
      service.create(other, actor),
      service.create({ ...other, price: { tokenAmount: 2000000n } }, actor),
    ]);
    expect(a).toMatchObject({ status: 'fulfilled', value: { created: true } });
    expect(b).toMatchObject({ status: 'fulfilled', value: { created: false } });
    const first = (a as PromiseFulfilledResult<{ request: { id: string } }>).value.request.id;
    expect((b as PromiseFulfilledResult<{ request: { id: string } }>).value.request.id).toBe(first);
    expect(c).toMatchObject({ status: 'fulfilled', value: { created: true } });
    expect(d).toMatchObject({
      status: 'rejected',
      reason: { status: 409, code: 'reference_taken', attribute: 'token_amount' },
    });
    const rows = await h.storage.db.query<{ reference: string; n: string }>(
      'SELECT reference, count(*)::text AS n FROM payment_requests WHERE app_id = $1 AND reference = ANY($2) GROUP BY reference',
      [appId, [same.reference, other.reference]],
    );
    expect(rows.map((r) => r.n)).toEqual(['1', '1']);
    const events = await eventsOf([first]);
    expect(events.map((e) => e.type)).toEqual(['payment_request.created']);
  });

  it('a request the database refuses fails alone: the others of its batch are created', async () => {
    const good = [input(), input()];
    // an amount of 0 passes no body check (the route refuses it first); the table's CHECK refuses it here
    const refused = input({ price: { tokenAmount: 0n } });
    const [a, bad, b] = await Promise.allSettled([
      service.create(good[0], actor),
      service.create(refused, actor),
      service.create(good[1], actor),
    ]);
    expect(a).toMatchObject({ status: 'fulfilled', value: { created: true } });
    expect(b).toMatchObject({ status: 'fulfilled', value: { created: true } });
    expect(bad.status).toBe('rejected');
    const rows = await h.storage.db.query<{ reference: string }>(
      'SELECT reference FROM payment_requests WHERE app_id = $1 AND reference = ANY($2) ORDER BY reference',
      [appId, [good[0].reference, good[1].reference, refused.reference]],
    );
    expect(rows.map((r) => r.reference).sort()).toEqual(good.map((g) => g.reference).sort());
  });

  it('answers each creation with what a read of it answers (the insert reads back only what the database decides)', async () => {
    const observedAt = new Date('2026-12-06T10:00:00.123Z');
    const priced = new PaymentRequestService(
      h.storage.db,
      {
        quote: async (token) => ({
          amount: token === 'WLD' ? '250000' : '100000',
          decimals: 5,
          observedAt,
          source: 'https://prices.test',
        }),
      },
      h.storage.bus,
      { outbox: writeEvent },
    );
    // an app's policy decides the expiry and the tolerance copied in
    await h.storage.db.query(
      'INSERT INTO payment_amount_policies (app_id, underpayment_tolerance_percent, flag_overpayment, default_expires_in_seconds) VALUES ($1, 2.5, false, 1200)',
      [appId],
    );
    const fiat = input({
      price: { amount: '12.34', currency: 'USD' },
      tokens: [
        { token: 'WLD', decimals: 18 },
        { token: 'USDCE', decimals: 6 },
      ],
      tokensField: 'accepted_tokens',
      metadata: JSON.stringify({ order: 7, note: 'a "quoted" note' }),
    });
    const token = input({ expiresInSeconds: 60, metadata: JSON.stringify({ order: 8 }) });
    const made = await Promise.all([priced.create(fiat, actor), priced.create(token, actor)]);
    for (const m of made) {
      expect(m.created).toBe(true);
      const read = await priced.get(appId, m.request.id);
      expect(m.view).toEqual(read);
    }
    expect(made[0].view).toMatchObject({
      amount_policy: { underpayment_tolerance_percent: '2.5', flag_overpayment: false },
      accepted_tokens: [expect.objectContaining({ token: 'WLD' }), expect.objectContaining({ token: 'USDCE' })],
    });
    const lifetime = (v: { created_at: string; expires_at: string }) =>
      Date.parse(v.expires_at) - Date.parse(v.created_at);
    expect(lifetime(made[0].view as never)).toBe(1200000);
    expect(lifetime(made[1].view as never)).toBe(60000);
    expect(made[1].view).toMatchObject({ amount_due: '1000000' });
  });

  it('the receiving-address check follows an address added and removed at once (its cache is dropped)', async () => {
    const app = newAppId();
    const { api_key: key } = await apiKeyFor(h, app);
    const to = `0x${'c'.repeat(40)}`;
    const create = () =>
      request(h.publicApp)
        .post('/api/v2/client/payment-requests')
        .set('Authorization', `Bearer ${key}`)
        .send({ reference: `o-${++orders}`, chain: 'worldchain', token: 'USDCE', to, token_amount: '1000000' });
    const before = await create();
    expect(before.status).toBe(403);
    expect(before.body).toMatchObject({ code: 'receiving_address_not_registered', attribute: 'to' });
    await receiveAt(h, app, to);
    expect((await create()).status).toBe(201);
    const removed = await h.admin('delete', `/apps/${app}/receiving-addresses/worldchain/${to}`);
    expect(removed.status).toBe(200);
    const after = await create();
    expect(after.status).toBe(403);
    expect(after.body).toMatchObject({ code: 'receiving_address_not_registered', attribute: 'to' });
  });
});
