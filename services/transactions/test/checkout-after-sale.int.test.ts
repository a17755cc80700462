import type { Hash } from 'viem';
import { checkoutChain, freshAddress, type CheckoutChain } from './support/checkout-chain';

describe('payment requests after the sale (issue 44): expiry decided once (ganache)', () => {
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
});
