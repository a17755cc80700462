import type { Hash } from 'viem';
import { receiveAt } from './support';
import { checkoutChain, type CheckoutChain, type RequestView } from './support/checkout-chain';
import type { Address } from './support/local-chain';

interface RefundBody {
  id: string;
  payment_request_id: string;
  transaction_hash: string;
  token: string;
  from: string;
  to: string;
  amount: string;
  block_number: string;
  payment_request?: RequestView;
}

describe('refunds (issue 44): recorded, verified on the local chain, claimed once', () => {
  let c: CheckoutChain;
  let payer: Address;
  let shop: Address;
  let stranger: Address;
  beforeAll(async () => {
    // the service reads the chain itself (refunds are verified when recorded), final at one confirmation
    c = await checkoutChain((chain) => ({
      CHAIN_RPC_URL: chain.url,
      CHAIN_FINALITY: '1',
      CHAIN_POLL_INTERVAL_MS: '3600000',
    }));
    [payer, shop, stranger] = c.chain.accounts;
    // the shop and the stranger hold tokens to send back (a transfer nobody records: no scan runs here)
    await c.chain.transfer(c.usdce, shop, 10000000n);
    await c.chain.transfer(c.usdce, stranger, 10000000n);
  }, 60000);
  afterAll(() => c.close());

  const refund = (id: string, body: Record<string, unknown>, key?: string) =>
    c.api('post', `/api/v2/client/payment-requests/${id}/refunds`, key).send(body);

  /** A request of 1 USDCE to the shop, paid by `payer` and final. */
  async function paidRequest(): Promise<RequestView> {
    const r = await c.create(shop);
    const hash = await c.chain.transfer(c.usdce, shop, 1000000n);
    expect((await c.recordPayment(r.id, hash, shop)).status).toBe(201);
    await c.watcher(1).tick();
    expect(await c.read(r.id)).toMatchObject({ status: 'paid', amount_paid: '1000000' });
    return c.read(r.id);
  }

  const stored = async (id: string) =>
    (
      await c.h.storage.db.query<{ status: string; amount_refunded: string }>(
        'SELECT status, amount_refunded::text AS amount_refunded FROM payment_requests WHERE id = $1',
        [id],
      )
    )[0];

  it('a real refund makes the request partially_refunded, a second one refunded, each with its webhook and audit record', async () => {
    const r = await paidRequest();
    const first = await c.chain.transfer(c.usdce, payer, 400000n, shop);
    const res = await refund(r.id, { transaction_hash: first, amount: '400000' });
    expect(res.status).toBe(201);
    const body = res.body as RefundBody;
    expect(body).toMatchObject({
      payment_request_id: r.id,
      transaction_hash: first.toLowerCase(),
      token: 'USDCE',
      from: shop.toLowerCase(),
      to: payer.toLowerCase(),
      amount: '400000',
    });
    expect(body.id).toMatch(/^rf_[0-9a-f]{32}$/);
    expect(body.payment_request).toMatchObject({
      status: 'partially_refunded',
      reason: 'partially_refunded',
      amount_paid: '1000000',
      amount_refunded: '400000',
      refunds: [{ id: body.id, amount: '400000' }],
    });
    expect(await stored(r.id)).toEqual({ status: 'partially_refunded', amount_refunded: '400000' });
    expect(await c.read(r.id)).toMatchObject({ status: 'partially_refunded', amount_refunded: '400000' });

    // the second refund, without amount: the chain decides (600000), and the refunds reach what was paid
    const second = await c.chain.transfer(c.usdce, payer, 600000n, shop);
    const done = await refund(r.id, { transaction_hash: second, chain: 'worldchain' });
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({
      amount: '600000',
      payment_request: { status: 'refunded', amount_refunded: '1000000' },
    });
    expect(await stored(r.id)).toEqual({ status: 'refunded', amount_refunded: '1000000' });

    const events = await c.events(r.id);
    expect(events.map((e) => e.type)).toEqual([
      'payment_request.created',
      'payment_request.paid',
      'payment_request.partially_refunded',
      'payment_request.refunded',
    ]);
    const [partial, full] = events.slice(2) as unknown as { data: RequestView & { refund: RefundBody } }[];
    expect(partial.data).toMatchObject({
      id: r.id,
      status: 'partially_refunded',
      amount_paid: '1000000',
      amount_refunded: '400000',
      refund: { id: body.id, transaction_hash: first.toLowerCase(), amount: '400000', to: payer.toLowerCase() },
    });
    expect(full.data).toMatchObject({
      status: 'refunded',
      amount_refunded: '1000000',
      refund: { transaction_hash: second.toLowerCase(), amount: '600000' },
      refunds: [{ amount: '400000' }, { amount: '600000' }],
    });
    const audit = await c.h.storage.db.query<{ actor_type: string; detail: string }>(
      "SELECT actor_type, detail::text AS detail FROM audit_events WHERE type = 'payment_request.refund_recorded' AND subject = $1 ORDER BY id",
      [r.id],
    );
    expect(audit.map((a) => a.actor_type)).toEqual(['app', 'app']);
    expect(JSON.parse(audit[1].detail)).toMatchObject({ amount: '600000', status: 'refunded' });

    // the events feed has them, the list pages with cursor → next_cursor, a third refund is refused
    const feed = await c.api('get', '/api/v2/client/events?limit=100');
    expect(feed.status).toBe(200);
    const types = (feed.body.data as { type: string }[]).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['payment_request.partially_refunded', 'payment_request.refunded']));
    const page1 = await c.api('get', `/api/v2/client/payment-requests/${r.id}/refunds?limit=1`);
    expect(page1.status).toBe(200);
    expect(page1.body.data).toMatchObject([{ id: body.id }]);
    expect(page1.body.next_cursor).toEqual(expect.any(String));
    const page2 = await c.api(
      'get',
      `/api/v2/client/payment-requests/${r.id}/refunds?limit=1&cursor=${page1.body.next_cursor}`,
    );
    expect(page2.body).toMatchObject({ data: [{ transaction_hash: second.toLowerCase() }], next_cursor: null });

    // recording the same refund again answers it; a refund beyond what was paid is refused
    const again = await refund(r.id, { transaction_hash: first });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: body.id, amount: '400000' });
    const third = await c.chain.transfer(c.usdce, payer, 1n, shop);
    const over = await refund(r.id, { transaction_hash: third });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({ code: 'payment_request_not_refundable', attribute: 'id' });
    expect(over.body.detail).toContain('is refunded');
    expect(await stored(r.id)).toEqual({ status: 'refunded', amount_refunded: '1000000' });
  });

  it('an underpaid request can be refunded, and stays partially_refunded when a later payment becomes final', async () => {
    const r = await c.create(shop, { token_amount: '2000000' });
    const first = await c.chain.transfer(c.usdce, shop, 1000000n);
    expect((await c.recordPayment(r.id, first, shop, '1000000')).status).toBe(201);
    await c.watcher(1).tick();
    expect(await c.read(r.id)).toMatchObject({ status: 'underpaid', amount_paid: '1000000' });
    const back = await c.chain.transfer(c.usdce, payer, 500000n, shop);
    expect((await refund(r.id, { transaction_hash: back })).status).toBe(201);
    expect(await stored(r.id)).toEqual({ status: 'partially_refunded', amount_refunded: '500000' });
    // the customer pays the rest: counted, and the request stays refunded in part
    const rest = await c.chain.transfer(c.usdce, shop, 1000000n);
    expect((await c.recordPayment(r.id, rest, shop, '1000000')).status).toBe(201);
    await c.watcher(1).tick();
    const after = await c.read(r.id);
    expect(after).toMatchObject({
      status: 'partially_refunded',
      amount_paid: '2000000',
      amount_refunded: '500000',
      refunds: [{ transaction_hash: back.toLowerCase(), amount: '500000' }],
    });
    const last = (await c.events(r.id)).pop()!;
    expect(last).toMatchObject({ type: 'payment_request.partially_refunded', data: { amount_paid: '2000000' } });
    expect(last.data.refunds).toHaveLength(1);
  });

  it('a refund from an address that is not one of the app’s receiving addresses is refused (403), nothing stored', async () => {
    const r = await paidRequest();
    const hash = await c.chain.transfer(c.usdce, payer, 500000n, stranger);
    const res = await refund(r.id, { transaction_hash: hash });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'refund_not_from_receiving_address', attribute: 'transaction_hash' });
    expect(res.body.detail).toContain(stranger.toLowerCase());
    expect(await stored(r.id)).toEqual({ status: 'paid', amount_refunded: '0' });
    expect(
      await c.h.storage.db.query('SELECT 1 FROM refunds WHERE transaction_hash = $1', [hash.toLowerCase()]),
    ).toEqual([]);
    // registered afterwards, the same transfer is a refund
    await receiveAt(c.h, c.appId, stranger);
    expect((await refund(r.id, { transaction_hash: hash })).status).toBe(201);
    expect(await stored(r.id)).toEqual({ status: 'partially_refunded', amount_refunded: '500000' });
  });

  it('a transfer is claimed once: another request’s refund or a payment of it is refused (409), and the payment’s own transfer is no refund', async () => {
    const a = await paidRequest();
    const b = await paidRequest();
    const hash = await c.chain.transfer(c.usdce, payer, 300000n, shop);
    expect((await refund(a.id, { transaction_hash: hash })).status).toBe(201);
    const reused = await refund(b.id, { transaction_hash: hash });
    expect(reused.status).toBe(409);
    expect(reused.body).toMatchObject({ code: 'transaction_already_claimed', attribute: 'transaction_hash' });
    expect(await stored(b.id)).toEqual({ status: 'paid', amount_refunded: '0' });
    // a payment recorded for the refund's transaction is refused too (the claim is shared)
    const open = await c.create(shop);
    const asPayment = await c.recordPayment(open.id, hash as Hash, shop, '300000');
    expect(asPayment.status).toBe(409);
    expect(asPayment.body).toMatchObject({ code: 'transaction_already_claimed' });
    // the payment's transfer goes to the shop, not to the payer
    const paidWith = b.payments[0].transaction_hash!;
    const wrong = await refund(b.id, { transaction_hash: paidWith });
    expect(wrong.status).toBe(422);
    expect(wrong.body).toMatchObject({ code: 'refund_wrong_recipient', attribute: 'transaction_hash' });
  });

  it('refusals name the field: not paid, unknown hash, wrong amount, more than paid, wrong chain, malformed', async () => {
    const open = await c.create(shop);
    const some = await c.chain.transfer(c.usdce, payer, 100000n, shop);
    const notPaid = await refund(open.id, { transaction_hash: some });
    expect(notPaid.status).toBe(409);
    expect(notPaid.body).toMatchObject({ code: 'payment_request_not_refundable', attribute: 'id' });
    expect(notPaid.body.detail).toContain('is pending');

    const r = await paidRequest();
    const unknown = await refund(r.id, { transaction_hash: `0x${'ab'.repeat(32)}` });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({ code: 'refund_transaction_not_found', attribute: 'transaction_hash' });
    const wrongAmount = await refund(r.id, { transaction_hash: some, amount: '1' });
    expect(wrongAmount.status).toBe(422);
    expect(wrongAmount.body).toMatchObject({ code: 'refund_wrong_amount', attribute: 'amount' });
    const big = await c.chain.transfer(c.usdce, payer, 1500000n, shop);
    const tooMuch = await refund(r.id, { transaction_hash: big });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body).toMatchObject({ code: 'refund_exceeds_amount_paid', attribute: 'amount' });
    const chain = await refund(r.id, { transaction_hash: some, chain: 'base' });
    expect(chain.status).toBe(422);
    expect(chain.body).toMatchObject({ code: 'refund_wrong_chain', attribute: 'chain' });
    const malformed = await refund(r.id, { transaction_hash: 'nope' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ code: 'invalid_parameter', attribute: 'transaction_hash' });
    expect(await stored(r.id)).toEqual({ status: 'paid', amount_refunded: '0' });
    // another app's key does not see the request
    const other = await c.h.admin('post', `/apps/app_${'e'.repeat(32)}/api-keys`).send({ name: 'other' });
    expect((await refund(r.id, { transaction_hash: some }, other.body.api_key)).status).toBe(404);
  });
});

describe('refunds wait for finality: one not final yet is refused, then recorded once final (ganache)', () => {
  let c: CheckoutChain;
  beforeAll(async () => {
    c = await checkoutChain((chain) => ({
      CHAIN_RPC_URL: chain.url,
      CHAIN_FINALITY: '3',
      CHAIN_POLL_INTERVAL_MS: '3600000',
    }));
  }, 60000);
  afterAll(() => c.close());

  it('409 refund_not_final with Retry-After and nothing stored, until the block is final', async () => {
    const [payer, shop] = c.chain.accounts;
    const r = await c.create(shop);
    const paid = await c.chain.transfer(c.usdce, shop, 1000000n);
    expect((await c.recordPayment(r.id, paid, shop)).status).toBe(201);
    await c.chain.mine(2);
    await c.watcher(3).tick();
    expect(await c.read(r.id)).toMatchObject({ status: 'paid' });

    const hash = await c.chain.transfer(c.usdce, payer, 1000000n, shop);
    const early = await c
      .api('post', `/api/v2/client/payment-requests/${r.id}/refunds`)
      .send({ transaction_hash: hash });
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ code: 'refund_not_final', attribute: 'transaction_hash' });
    expect(early.headers['retry-after']).toBe('15');
    expect(await c.h.storage.db.query('SELECT 1 FROM refunds WHERE payment_request_id = $1', [r.id])).toEqual([]);
    expect(await c.read(r.id)).toMatchObject({ status: 'paid', amount_refunded: '0', refunds: [] });

    await c.chain.mine(2);
    const final = await c
      .api('post', `/api/v2/client/payment-requests/${r.id}/refunds`)
      .send({ transaction_hash: hash });
    expect(final.status).toBe(201);
    expect(final.body).toMatchObject({ amount: '1000000', payment_request: { status: 'refunded' } });
  });
});
