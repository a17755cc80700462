import type { Hash } from 'viem';
import { receiveAt } from './support';
import { checkoutChain, freshAddress, type CheckoutChain } from './support/checkout-chain';

describe('payment requests after the sale (issue 44): expiry decided once, cancel (ganache)', () => {
  let c: CheckoutChain;
  beforeAll(async () => {
    c = await checkoutChain();
    // the first scan starts at the final block then: later transfers are scanned
    await c.watcher(1).scan();
  }, 60000);
  afterAll(() => c.close());

  describe('expiry decided once', () => {
    it('a request reported expired is paid_late even when the block’s whole-second time is before expires_at', async () => {
      const shop = freshAddress();
      const r = await c.create(shop);
      // the transfer's block is two minutes old (the chain's clock set back for it, then restored)
      await c.chain.rpc('evm_setTime', [Date.now() - 120000]);
      let hash: Hash;
      try {
        hash = await c.chain.transfer(c.usdce, shop, 1000000n);
      } finally {
        await c.chain.rpc('evm_setTime', [Date.now()]);
      }
      const block = await c.blockTime(hash);
      // the expiry falls half a second after the block's whole second: the block's time is before it
      await c.setExpiry(r.id, "to_timestamp($2) + interval '500 milliseconds'", [block]);
      const expired = await c.read(r.id);
      expect(expired).toMatchObject({ status: 'expired', reason: 'expired' });
      expect(Date.parse(expired.expires_at)).toBe(block * 1000 + 500);

      expect((await c.recordPayment(r.id, hash, shop)).status).toBe(201);
      await c.watcher(1).tick();
      const late = await c.read(r.id);
      expect(late).toMatchObject({ status: 'paid_late', reason: 'paid_after_expiry', amount_paid: '1000000' });
      expect(late.reason_detail).toContain('reported expired at');
      expect(late.payments).toMatchObject([{ transaction_hash: hash, status: 'mined', late: true }]);
      expect((await c.events(r.id)).map((e) => e.type)).toEqual([
        'payment_request.created',
        'payment_request.expired',
        'payment_request.paid_late',
      ]);
      const [stored] = await c.h.storage.db.query<{ expired_at: Date | null }>(
        'SELECT expired_at FROM payment_requests WHERE id = $1',
        [r.id],
      );
      expect(stored.expired_at).toBeInstanceOf(Date);
    });

    it('a request never reported expired is paid when its block came before expires_at', async () => {
      const shop = freshAddress();
      const r = await c.create(shop);
      const hash = await c.chain.transfer(c.usdce, shop, 1000000n);
      expect((await c.recordPayment(r.id, hash, shop)).status).toBe(201);
      await c.watcher(1).tick();
      expect(await c.read(r.id)).toMatchObject({ status: 'paid', payments: [{ late: false }] });
    });
  });

  describe('cancel', () => {
    const cancel = (id: string, key?: string) => c.api('post', `/api/v2/client/payment-requests/${id}/cancel`, key);

    it('an open request is canceled, with its event and audit record; a transfer arriving later is flagged late, never paid', async () => {
      const shop = freshAddress();
      const r = await c.create(shop);
      const res = await cancel(r.id);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: r.id, status: 'canceled', reason: 'canceled', amount_paid: '0' });
      expect(await c.read(r.id)).toMatchObject({ status: 'canceled' });
      const [audit] = await c.h.storage.db.query<{ actor_type: string }>(
        "SELECT actor_type FROM audit_events WHERE type = 'payment_request.canceled' AND subject = $1",
        [r.id],
      );
      expect(audit).toEqual({ actor_type: 'app' });

      // the customer pays anyway, and nobody records the hash: the watcher attaches it, flagged
      const hash = await c.chain.transfer(c.usdce, shop, 1000000n);
      await c.scanned();
      const flagged = await c.read(r.id);
      expect(flagged).toMatchObject({ status: 'paid_late', reason: 'paid_after_cancel', amount_paid: '1000000' });
      expect(flagged.payments).toMatchObject([{ transaction_hash: hash, status: 'mined', late: true }]);
      const types = (await c.events(r.id)).map((e) => e.type);
      expect(types).toEqual(['payment_request.created', 'payment_request.canceled', 'payment_request.paid_late']);
      expect(types).not.toContain('payment_request.paid');
    });

    it('a recorded payment of a canceled request is flagged too, and never makes it detected or paid', async () => {
      const shop = freshAddress();
      const r = await c.create(shop);
      expect((await cancel(r.id)).status).toBe(200);
      const hash = await c.chain.transfer(c.usdce, shop, 1000000n);
      expect((await c.recordPayment(r.id, hash, shop)).status).toBe(201);
      await c.watcher(3).tick();
      expect(await c.read(r.id)).toMatchObject({ status: 'canceled' });
      await c.chain.mine(2);
      await c.watcher(3).tick();
      expect(await c.read(r.id)).toMatchObject({ status: 'paid_late', reason: 'paid_after_cancel' });
      expect((await c.events(r.id)).map((e) => e.type)).toEqual([
        'payment_request.created',
        'payment_request.canceled',
        'payment_request.paid_late',
      ]);
    });

    it('only an open request can be canceled: 409 payment_request_not_open naming its status; another app’s is 404', async () => {
      const shop = freshAddress();
      const r = await c.create(shop);
      expect((await cancel(r.id)).status).toBe(200);
      const again = await cancel(r.id);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ code: 'payment_request_not_open', attribute: 'id' });
      expect(again.body.detail).toContain('is canceled');

      const paid = await c.create(shop);
      const hash = await c.chain.transfer(c.usdce, shop, 1000000n);
      expect((await c.recordPayment(paid.id, hash, shop)).status).toBe(201);
      await c.watcher(1).tick();
      expect(await c.read(paid.id)).toMatchObject({ status: 'paid' });
      const refused = await cancel(paid.id);
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toContain('is paid');
      expect(await c.read(paid.id)).toMatchObject({ status: 'paid' });

      const other = await c.h.admin('post', `/apps/app_${'e'.repeat(32)}/api-keys`).send({ name: 'other' });
      const open = await c.create(shop);
      const foreign = await cancel(open.id, other.body.api_key);
      expect(foreign.status).toBe(404);
      expect(await c.read(open.id)).toMatchObject({ status: 'pending' });
      expect((await cancel('pr_nope')).status).toBe(400);
    });
  });

  describe('app_id on create and on record; token_amount optional with payment_request_id', () => {
    const post = (path: string, body: Record<string, unknown>) => c.api('post', path).send(body);
    // one of the app's receiving addresses, as every payment request's `to` must be
    const shopAddress = freshAddress();
    beforeAll(() => receiveAt(c.h, c.appId, shopAddress));
    const requestBody = (fields: Record<string, unknown> = {}) => ({
      reference: `app-id-${Math.random().toString(36).slice(2)}`,
      chain: 'worldchain',
      token: 'USDCE',
      to: shopAddress,
      token_amount: '1000000',
      ...fields,
    });

    it('create accepts app_id when it is the key’s app, and refuses another app’s (403 invalid_app) or a malformed one (400)', async () => {
      const own = await post('/api/v2/client/payment-requests', requestBody({ app_id: c.appId }));
      expect(own.status).toBe(201);
      const other = await post('/api/v2/client/payment-requests', requestBody({ app_id: `app_${'f'.repeat(32)}` }));
      expect(other.status).toBe(403);
      expect(other.body).toMatchObject({ code: 'invalid_app', attribute: 'app_id' });
      const malformed = await post('/api/v2/client/payment-requests', requestBody({ app_id: 'my-app' }));
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ code: 'invalid_parameter', attribute: 'app_id' });
      const stored = await c.h.storage.db.query('SELECT 1 FROM payment_requests WHERE app_id = $1', [
        `app_${'f'.repeat(32)}`,
      ]);
      expect(stored).toEqual([]);
    });

    it('record takes no app_id (the key’s app) and no token_amount with payment_request_id: the chain decides what counts', async () => {
      const shop = freshAddress();
      const r = await c.create(shop, { token_amount: '2000000' });
      const hash = await c.chain.transfer(c.usdce, shop, 1500000n);
      const recorded = await post('/api/v2/client/transaction', {
        type: 'pay',
        reference: `no-amount-${Math.random().toString(36).slice(2)}`,
        transaction_hash: hash,
        chain: 'worldchain',
        token: 'USDCE',
        to: shop,
        from: c.chain.accounts[0],
        payment_request_id: r.id,
      });
      expect(recorded.status).toBe(201);
      expect(recorded.body).toMatchObject({ app_id: c.appId, token_amount: '2000000', transaction_status: 'pending' });
      await c.watcher(1).tick();
      expect(await c.read(r.id)).toMatchObject({
        status: 'underpaid',
        amount_paid: '1500000',
        payments: [{ transaction_hash: hash, status: 'mined', amount_received: '1500000' }],
      });
      // without payment_request_id the amount is still required; another app's app_id is still refused
      const noAmount = await post('/api/v2/client/transaction', {
        type: 'pay',
        reference: 'no-amount-no-request',
        transaction_hash: `0x${'1'.repeat(64)}`,
        chain: 'worldchain',
        token: 'USDCE',
        to: shop,
        from: c.chain.accounts[0],
      });
      expect(noAmount.status).toBe(400);
      expect(noAmount.body).toMatchObject({ code: 'required', attribute: 'token_amount' });
      const foreign = await post('/api/v2/client/transaction', {
        app_id: `app_${'f'.repeat(32)}`,
        type: 'pay',
        reference: 'foreign-app',
        transaction_hash: `0x${'2'.repeat(64)}`,
        chain: 'worldchain',
        token: 'USDCE',
        to: shop,
        from: c.chain.accounts[0],
        token_amount: '1000000',
      });
      expect(foreign.status).toBe(403);
      expect(foreign.body).toMatchObject({ code: 'invalid_app', attribute: 'app_id' });
    });
  });

  describe('the payment policy with the app’s API key', () => {
    const policy = (body?: Record<string, unknown>) =>
      body === undefined
        ? c.api('get', '/api/v2/client/payment-policy')
        : c.api('put', '/api/v2/client/payment-policy').send(body);

    it('reads the defaults, sets fields (the others kept), refuses a bad value naming the field, and audits the change', async () => {
      expect((await policy()).body).toEqual({
        app_id: c.appId,
        underpayment_tolerance_percent: '0',
        flag_overpayment: true,
        default_expires_in: 900,
        display_name: null,
        return_origins: [],
      });
      const set = await policy({ default_expires_in: 120 });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({
        app_id: c.appId,
        underpayment_tolerance_percent: '0',
        flag_overpayment: true,
        default_expires_in: 120,
        display_name: null,
        return_origins: [],
      });
      for (const [field, value] of [
        ['underpayment_tolerance_percent', 51],
        ['flag_overpayment', 'maybe'],
        ['default_expires_in', 30],
      ] as const) {
        const bad = await policy({ [field]: value });
        expect(bad.status).toBe(400);
        expect(bad.body).toMatchObject({ code: 'invalid_parameter', attribute: field });
      }
      expect((await policy()).body.default_expires_in).toBe(120);
      // a request created without expires_in takes the app's default expiry
      const r = await c.create(freshAddress());
      expect(Date.parse(r.expires_at) - Date.parse(r.created_at as string)).toBe(120000);
      const audited = await c.h.storage.db.query<{ actor_type: string; detail: Record<string, unknown> }>(
        "SELECT actor_type, detail FROM audit_events WHERE type = 'payment_policy.changed' AND subject = $1 ORDER BY id",
        [c.appId],
      );
      expect(audited).toEqual([
        {
          actor_type: 'app',
          detail: {
            underpayment_tolerance_percent: '0',
            flag_overpayment: true,
            default_expires_in: 120,
            display_name: null,
            return_origins: [],
          },
        },
      ]);
      // the operator's command still sets it, and reads what the app set
      const admin = await c.h.admin('get', `/apps/${c.appId}/payment-policy`);
      expect(admin.body).toMatchObject({ default_expires_in: 120 });
    });

    it('a tolerance set through the API changes how a payment short of the amount settles', async () => {
      const shop = freshAddress();
      const before = await c.create(shop, { token_amount: '1000000' });
      expect((await policy({ underpayment_tolerance_percent: 5 })).body.underpayment_tolerance_percent).toBe('5');
      const after = await c.create(shop, { token_amount: '1000000' });
      for (const r of [before, after]) {
        const hash = await c.chain.transfer(c.usdce, shop, 960000n);
        expect((await c.recordPayment(r.id, hash, shop, '960000')).status).toBe(201);
      }
      await c.watcher(1).tick();
      // created under the old policy: underpaid; under the new one: paid within the tolerance
      expect(await c.read(before.id)).toMatchObject({ status: 'underpaid', amount_paid: '960000' });
      expect(await c.read(after.id)).toMatchObject({
        status: 'paid',
        reason: 'underpaid_within_tolerance',
        amount_paid: '960000',
        amount_policy: { underpayment_tolerance_percent: '5' },
      });
    });
  });

  describe('one matching rule for a transfer nobody recorded', () => {
    const outcomeOf = async (hash: Hash) =>
      (
        await c.h.storage.db.query<{ outcome: string | null; payment_request_id: string | null }>(
          'SELECT outcome, payment_request_id FROM chain_transfers WHERE transaction_hash = $1',
          [hash],
        )
      )[0];

    it('two open requests with the same address and amount, one transfer: exactly one is paid, the oldest', async () => {
      const shop = freshAddress();
      const older = await c.create(shop);
      const newer = await c.create(shop);
      const hash = await c.chain.transfer(c.usdce, shop, 1000000n);
      await c.chain.mine(1);
      // two replicas scanning at once still attach it once
      await Promise.all([c.watcher(1).scan(), c.watcher(1).scan()]);
      expect(await outcomeOf(hash)).toEqual({ outcome: 'attached', payment_request_id: older.id });
      const views = [await c.read(older.id), await c.read(newer.id)];
      expect(views.map((v) => v.status)).toEqual(['paid', 'pending']);
      expect(views[0].payments).toMatchObject([{ transaction_hash: hash }]);
      expect(views[1].payments).toEqual([]);
      const payments = await c.h.storage.db.query('SELECT 1 FROM transactions WHERE transaction_hash = $1', [hash]);
      expect(payments).toHaveLength(1);
    });

    it('an open request comes before a canceled or reported-expired one owed the same amount', async () => {
      const shop = freshAddress();
      const canceled = await c.create(shop);
      const expired = await c.create(shop);
      const open = await c.create(shop);
      expect((await c.api('post', `/api/v2/client/payment-requests/${canceled.id}/cancel`)).status).toBe(200);
      await c.setExpiry(expired.id, "now() - interval '1 minute'");
      expect(await c.read(expired.id)).toMatchObject({ status: 'expired' });
      const hash = await c.chain.transfer(c.usdce, shop, 1000000n);
      await c.scanned();
      expect(await outcomeOf(hash)).toEqual({ outcome: 'attached', payment_request_id: open.id });
      expect(await c.read(open.id)).toMatchObject({ status: 'paid' });
      expect(await c.read(canceled.id)).toMatchObject({ status: 'canceled', payments: [] });
      expect(await c.read(expired.id)).toMatchObject({ status: 'expired', payments: [] });
    });
  });
});
