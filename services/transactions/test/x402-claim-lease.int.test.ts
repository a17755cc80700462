import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { testDatabase, testLogger } from '@attest/testing';
import type { Db } from '@attest/common';
import { keepClaim } from '../src/x402/claim-lease';
import { PaymentIdClaimed, settlementStore, type AuthorizationKey } from '../src/x402/settlement-store';

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;
const keyOf = (): AuthorizationKey => ({ network: 'eip155:1337', token: hex(20), payer: hex(20), nonce: hex(32) });
const claim = { appId: 'app_claims', payTo: hex(20), value: '1000000' };

/**
 * A review finding (issue 43): a settle waiting for the relayer's lock longer than its claim's lease lost the
 * claim to another settle, and both submitted. A claim carries a fencing token; the settle that waits keeps
 * its lease alive; one whose claim was taken over can store no transaction hash (so it sends nothing).
 */
describe('x402 claims: fencing tokens and lease renewal', () => {
  let db: Db;
  beforeAll(async () => {
    db = await testDatabase('transactions', path.join(__dirname, '..', 'migrations'));
  });
  afterAll(() => db?.close());

  const leaseUntil = async (key: AuthorizationKey) => (await settlementStore(db).find(key))!.leaseUntil.getTime();

  it('a claim taken over (its lease over, no hash) gets the next token; the first holder can no longer store a hash nor give it up', async () => {
    const store = settlementStore(db);
    const key = keyOf();
    expect(await store.claim(key, { ...claim, leaseMs: -1000 })).toBe(1);
    // its lease over and no hash: another settle takes it, with the next token
    expect(await store.claim(key, { ...claim, leaseMs: 60000 })).toBe(2);
    // the lease is the new holder's: nobody else takes it
    expect(await store.claim(key, { ...claim, leaseMs: 60000 })).toBeNull();
    // the first holder wakes up: its hash is refused (it sends nothing), its renewal and release do nothing
    expect(await store.setTransactionHash(key, 1, hex(32), 60000)).toBe(false);
    expect(await store.renewLease(key, 1, 60000)).toBe(false);
    await store.release(key, 1);
    expect(await store.find(key)).toMatchObject({ fence: 2, transactionHash: null, outcome: null });
    // the holder's own
    const hash = hex(32);
    expect(await store.setTransactionHash(key, 2, hash, 60000)).toBe(true);
    expect(await store.find(key)).toMatchObject({ fence: 2, transactionHash: hash });
    // once it has a hash, a claim is never taken over, whatever its lease
    await db.query(`UPDATE x402_settlements SET lease_until = now() - interval '1 second' WHERE nonce = $1`, [
      key.nonce,
    ]);
    expect(await store.claim(key, { ...claim, leaseMs: 60000 })).toBeNull();
    expect(await store.setTransactionHash(key, 2, hex(32), 60000)).toBe(false);
    expect(await store.find(key)).toMatchObject({ fence: 2, transactionHash: hash });
  });

  it('keepClaim extends the lease of a claim waiting to submit, and stops once it is taken over', async () => {
    const store = settlementStore(db);
    const key = keyOf();
    const leaseMs = 300;
    expect(await store.claim(key, { ...claim, leaseMs })).toBe(1);
    const first = await leaseUntil(key);
    const stop = keepClaim(store, key, 1, leaseMs, testLogger);
    try {
      // renewed: the lease moves on, past where it first ended, and the claim stays the holder's
      let current = first;
      while (current <= first) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        current = await leaseUntil(key);
      }
      expect(await store.find(key)).toMatchObject({ fence: 1, transactionHash: null });
      // taken over (as if this replica had stalled for longer than a lease): renewal no longer touches it
      await db.query(
        `UPDATE x402_settlements SET fence = 2, lease_until = now() + interval '1 hour' WHERE nonce = $1`,
        [key.nonce],
      );
      const taken = await leaseUntil(key);
      expect(await store.renewLease(key, 1, leaseMs)).toBe(false);
      expect(await leaseUntil(key)).toBe(taken);
    } finally {
      stop();
    }
  });

  /**
   * A review finding (issue 43): 024's index holds a payment-identifier while its claim has no outcome, whatever
   * the lease, and nothing sweeps: a claim abandoned before anything was sent kept the buyer's id for good.
   */
  it('a payment-identifier held by a claim abandoned before sending (no hash, lease over) is freed for a new claim', async () => {
    const store = settlementStore(db);
    const id = `pay_${randomBytes(8).toString('hex')}`;
    const [abandoned, fresh, third] = [keyOf(), keyOf(), keyOf()];
    expect(await store.claim(abandoned, { ...claim, leaseMs: -1000, paymentId: id })).toBe(1);
    // freed and claimed: the abandoned row stays, without the id and with the next token
    expect(await store.claim(fresh, { ...claim, leaseMs: 60000, paymentId: id })).toBe(1);
    expect(await store.find(abandoned)).toMatchObject({
      paymentId: null,
      fence: 2,
      transactionHash: null,
      outcome: null,
    });
    expect(await store.find(fresh)).toMatchObject({ paymentId: id, fence: 1 });
    // the settle that held it, were it only stalled, can store no hash (sends nothing) nor give the row up
    expect(await store.setTransactionHash(abandoned, 1, hex(32), 60000)).toBe(false);
    await store.release(abandoned, 1);
    expect(await store.find(abandoned)).toMatchObject({ fence: 2 });
    // a retry of the abandoned authorization takes its row over only with the id, which the new claim holds
    await expect(store.claim(abandoned, { ...claim, leaseMs: 60000, paymentId: id })).rejects.toBeInstanceOf(
      PaymentIdClaimed,
    );
    expect(await store.find(abandoned)).toMatchObject({ paymentId: null, fence: 2 });
    // a holder whose lease runs is alive: it keeps the id, and nothing is changed
    await expect(store.claim(third, { ...claim, leaseMs: 60000, paymentId: id })).rejects.toBeInstanceOf(
      PaymentIdClaimed,
    );
    expect(await store.find(third)).toBeNull();
    expect(await store.find(fresh)).toMatchObject({ paymentId: id, fence: 1 });
  });

  it('a holder that stored a transaction hash, or settled successfully, keeps its payment-identifier whatever its lease', async () => {
    const store = settlementStore(db);
    const expire = (key: AuthorizationKey) =>
      db.query(`UPDATE x402_settlements SET lease_until = now() - interval '1 second' WHERE nonce = $1`, [key.nonce]);
    const sent = keyOf();
    const id = `pay_${randomBytes(8).toString('hex')}`;
    expect(await store.claim(sent, { ...claim, leaseMs: 60000, paymentId: id })).toBe(1);
    expect(await store.setTransactionHash(sent, 1, hex(32), 60000)).toBe(true);
    await expire(sent);
    await expect(store.claim(keyOf(), { ...claim, leaseMs: 60000, paymentId: id })).rejects.toBeInstanceOf(
      PaymentIdClaimed,
    );
    expect(await store.find(sent)).toMatchObject({ paymentId: id, fence: 1 });

    const settled = keyOf();
    const other = `pay_${randomBytes(8).toString('hex')}`;
    expect(await store.claim(settled, { ...claim, leaseMs: -1000, paymentId: other })).toBe(1);
    const success = { success: true, transaction: hex(32), network: 'eip155:1337' as const };
    await store.finish(settled, success, null);
    await expect(store.claim(keyOf(), { ...claim, leaseMs: 60000, paymentId: other })).rejects.toBeInstanceOf(
      PaymentIdClaimed,
    );
    expect(await store.find(settled)).toMatchObject({ paymentId: other, fence: 1, outcome: success });
  });

  it('a claim keeps the validity the payer signed; a take-over replaces it', async () => {
    const store = settlementStore(db);
    const key = keyOf();
    expect(await store.claim(key, { ...claim, leaseMs: -1000, validAfter: '10', validBefore: '99999999999' })).toBe(1);
    expect(await store.find(key)).toMatchObject({ validAfter: '10', validBefore: '99999999999' });
    expect(await store.claim(key, { ...claim, leaseMs: 60000, validAfter: '11', validBefore: '12' })).toBe(2);
    expect(await store.find(key)).toMatchObject({ validAfter: '11', validBefore: '12' });
    // a claim that names none is as one from before 025
    const older = keyOf();
    expect(await store.claim(older, { ...claim, leaseMs: 60000 })).toBe(1);
    expect(await store.find(older)).toMatchObject({ validAfter: null, validBefore: null });
  });
});
