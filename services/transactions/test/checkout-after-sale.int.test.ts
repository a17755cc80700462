import type { Hash } from 'viem';
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
});
