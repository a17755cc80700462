import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { Hex } from 'viem';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { ReceivingAddressService, signatureVerifier } from '../src/receiving-addresses';
import { settlementStore } from '../src/x402/settlement-store';
import { authorizationKey } from '../src/x402/verify';
import { Relayer, x402Client, x402Transport, type Authorization } from '../src/x402/x402-chain';
import { apiKeyFor, newAppId, type TransactionsHarness } from './support';
import type { Address, LocalChain } from './support/local-chain';
import { x402Facilitator } from './support/x402-facilitator';
import { newAccount, requirementsFor, signedPayment, type X402Chain } from './support/x402';

const operator = { type: 'operator' as const, id: 'test' };

/**
 * Issue 43, settle's recovery paths: a claim whose replica submitted the transaction, stored its hash and
 * stopped is finished from that hash (its receipt), never submitted again; a receipt that does not come within
 * X402_RECEIPT_TIMEOUT_SECONDS answers settlement_in_progress with the hash, and a later settle completes it
 * without a second transaction; a stored hash that never reached the chain ends once its authorization expired.
 */
describe('x402 settle recovery (ganache)', () => {
  let chain: LocalChain;
  let x402: X402Chain;
  let h: TransactionsHarness;
  let relayerKey: Hex;
  let relayerAddress: Address;
  const appId = newAppId();
  let apiKey: string;
  const seller: Address = newAccount().address;

  beforeAll(async () => {
    ({
      chain,
      x402,
      h,
      apiKey,
      relayerKey,
      relayer: relayerAddress,
    } = await x402Facilitator(appId, [seller], { X402_RECEIPT_TIMEOUT_SECONDS: '1' }));
  }, 120000);
  afterAll(async () => {
    await h?.close();
    await chain?.close();
  });

  const settle = (payload: PaymentPayload, requirements: PaymentRequirements, key = apiKey) =>
    request(h.publicApp)
      .post('/x402/settle')
      .set('Authorization', `Bearer ${key}`)
      .send({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });

  const claimKeyOf = (payment: PaymentPayload) =>
    authorizationKey('eip155:1337', x402.token, (payment.payload as { authorization: Authorization }).authorization);

  const recorded = (hash: string) =>
    h.storage.db.query<{ id: string; app_id: string; token_amount: string; status: string }>(
      `SELECT id, app_id, token_amount::text AS token_amount, status FROM transactions WHERE transaction_hash = $1`,
      [hash],
    );

  /** Transactions the relayer sent, counting those still waiting in the pool. */
  const sentWithPending = async () => {
    const pool = (await chain.rpc('txpool_content')) as Record<'pending' | 'queued', Record<string, object>>;
    const waiting = [...Object.entries(pool.pending), ...Object.entries(pool.queued)]
      .filter(([from]) => from.toLowerCase() === relayerAddress.toLowerCase())
      .reduce((n, [, byNonce]) => n + Object.keys(byNonce).length, 0);
    return (await x402.sent(relayerAddress)) + waiting;
  };

  /**
   * What a replica does before it stops: claims the authorization, then submits it from the relayer with its
   * hash stored (the service's Relayer, on the same database); `leaseMs` is how long its claim still holds.
   */
  const claimSubmitAndStop = async (
    payment: PaymentPayload,
    leaseMs: number,
    human: { sub: string; agent: string } | null = null,
  ): Promise<Hex> => {
    const store = settlementStore(h.storage.db);
    const key = claimKeyOf(payment);
    const { authorization, signature } = payment.payload as { authorization: Authorization; signature: Hex };
    const fence = await store.claim(key, {
      appId,
      payTo: seller.toLowerCase(),
      value: authorization.value,
      leaseMs: -1000,
      human,
      validAfter: authorization.validAfter,
      validBefore: authorization.validBefore,
    });
    expect(fence).toBe(1);
    const transport = x402Transport([chain.url], 10000);
    const relayer = new Relayer(x402Client(transport), transport, relayerKey, 1337, h.storage.db);
    return relayer.submit(x402.token, authorization, signature, async (hash, db) => {
      expect(await settlementStore(db).setTransactionHash(key, fence!, hash, leaseMs)).toBe(true);
    });
  };

  it('finishes a claim whose replica sent the transaction and stopped from its hash, sending nothing again', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 3_000_000n);
    const asks = requirementsFor(x402.token, seller, 2_000_000n);
    const payment = await signedPayment(buyer, asks);
    const store = settlementStore(h.storage.db);
    const sentBefore = await x402.sent(relayerAddress);

    // its lease still runs: a settle waits for the outcome (receipt timeout), answers in progress, takes nothing over
    const hash = await claimSubmitAndStop(payment, 60000);
    expect(await x402.sent(relayerAddress)).toBe(sentBefore + 1);
    expect(await x402.balanceOf(seller)).toBe(2_000_000n);
    const waiting = await settle(payment, asks);
    expect(waiting.body).toEqual({
      success: false,
      errorReason: 'settlement_in_progress',
      errorMessage: expect.any(String),
      transaction: hash,
      network: 'eip155:1337',
      payer: buyer.address,
    });
    expect(await store.find(claimKeyOf(payment))).toMatchObject({ transactionHash: hash, outcome: null });
    expect(await recorded(hash)).toEqual([]);

    // another app is refused, and takes nothing over either
    const otherApp = newAppId();
    const otherKey = (await apiKeyFor(h, otherApp)).api_key;
    const theirs = await settle(payment, asks, otherKey);
    expect(theirs.body).toMatchObject({ success: false, errorReason: 'settled_by_another_app', transaction: '' });

    // the lease lapses (the replica is gone): the next settle reads the receipt of the stored hash
    await h.storage.db.query(`UPDATE x402_settlements SET lease_until = now() - interval '1 second' WHERE nonce = $1`, [
      claimKeyOf(payment).nonce,
    ]);
    const finished = await settle(payment, asks);
    expect(finished.body).toEqual({
      success: true,
      payer: buyer.address,
      transaction: hash,
      network: 'eip155:1337',
      amount: '2000000',
      extra: { transaction_id: expect.any(String) },
    });
    const rows = await recorded(hash);
    expect(rows).toEqual([
      {
        id: (finished.body as SettleResponse).extra!.transaction_id,
        app_id: appId,
        token_amount: '2000000',
        status: 'pending',
      },
    ]);
    const row = await store.find(claimKeyOf(payment));
    expect(row).toMatchObject({ appId, transactionHash: hash, outcome: finished.body });

    // a retry answers the first outcome; one transaction in all, moved once, recorded once
    expect((await settle(payment, asks)).body).toEqual(finished.body);
    expect(await x402.sent(relayerAddress)).toBe(sentBefore + 1);
    expect(await x402.balanceOf(seller)).toBe(2_000_000n);
    expect(await x402.balanceOf(buyer.address)).toBe(1_000_000n);
    expect(await recorded(hash)).toHaveLength(1);
  });

  it('a settle that finishes another one’s transaction records the person its attest-human proof named (kept with the claim)', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 1_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const payment = await signedPayment(buyer, asks);
    const human = { sub: `0x${'ab'.repeat(32)}`, agent: 'app_agent' };
    // the first settle verified the proof, claimed with the person, sent, and stopped; its lease is over
    const hash = await claimSubmitAndStop(payment, -1000, human);
    expect(await settlementStore(h.storage.db).find(claimKeyOf(payment))).toMatchObject({
      human,
      transactionHash: hash,
    });
    const finished = await settle(payment, asks);
    expect(finished.body).toMatchObject({
      success: true,
      transaction: hash,
      extensions: { 'attest-human': human },
    });
    const rows = await h.storage.db.query<{ human_sub: string; human_agent: string }>(
      'SELECT human_sub, human_agent FROM transactions WHERE transaction_hash = $1',
      [hash],
    );
    expect(rows).toEqual([{ human_sub: human.sub, human_agent: human.agent }]);
  });

  it('a receipt not seen in time answers in progress with the hash; a later settle completes it without resending', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 1_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const payment = await signedPayment(buyer, asks);
    const store = settlementStore(h.storage.db);
    const sellerBefore = await x402.balanceOf(seller);
    const sentBefore = await sentWithPending();
    await chain.rpc('miner_stop');
    try {
      const first = await settle(payment, asks);
      expect(first.body).toEqual({
        success: false,
        errorReason: 'settlement_in_progress',
        errorMessage: 'The transaction is not mined yet; settle again for its outcome.',
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        network: 'eip155:1337',
        payer: buyer.address,
      });
      const hash = (first.body as SettleResponse).transaction;
      expect(await sentWithPending()).toBe(sentBefore + 1);
      // stored: the claim with its hash, no outcome, the lease given up (nobody waits for the receipt any more)
      const claim = await store.find(claimKeyOf(payment));
      expect(claim).toMatchObject({ appId, transactionHash: hash, outcome: null });
      const [{ released }] = await h.storage.db.query<{ released: boolean }>(
        'SELECT lease_until <= now() AS released FROM x402_settlements WHERE nonce = $1',
        [claimKeyOf(payment).nonce],
      );
      expect(released).toBe(true);
      expect(await recorded(hash)).toEqual([]);
      // verify holds the authorization as being settled
      const verified = await request(h.publicApp)
        .post('/x402/verify')
        .set('Authorization', `Bearer ${apiKey}`)
        .send({ x402Version: 2, paymentPayload: payment, paymentRequirements: asks });
      expect(verified.body).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' });

      // still not mined: the retry follows the hash, answers the same, sends nothing
      const again = await settle(payment, asks);
      expect(again.body).toEqual(first.body);
      expect(await sentWithPending()).toBe(sentBefore + 1);

      // mined: the next retry reads the receipt and records the payment
      await chain.rpc('evm_mine');
      const done = await settle(payment, asks);
      expect(done.body).toEqual({
        success: true,
        payer: buyer.address,
        transaction: hash,
        network: 'eip155:1337',
        amount: '1000000',
        extra: { transaction_id: expect.any(String) },
      });
      expect(await recorded(hash)).toEqual([
        {
          id: (done.body as SettleResponse).extra!.transaction_id,
          app_id: appId,
          token_amount: '1000000',
          status: 'pending',
        },
      ]);
      expect((await store.find(claimKeyOf(payment)))?.outcome).toEqual(done.body);
      expect((await settle(payment, asks)).body).toEqual(done.body);
      expect(await sentWithPending()).toBe(sentBefore + 1);
      expect(await x402.balanceOf(seller)).toBe(sellerBefore + 1_000_000n);
    } finally {
      await chain.rpc('miner_start');
    }
  });

  it('a settle that finishes another one’s transaction may name only a payment request a first settle could', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 1_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const payment = await signedPayment(buyer, asks);
    const receiving = new ReceivingAddressService(h.storage.db, signatureVerifier({}));
    const paymentRequest = async (app: string, key: string) => {
      const to = newAccount().address;
      await receiving.addByOperator(app, 'worldchain', to, operator);
      const res = await request(h.publicApp)
        .post('/api/v2/client/payment-requests')
        .set('Authorization', `Bearer ${key}`)
        .send({
          reference: `x402-${randomBytes(6).toString('hex')}`,
          chain: 'worldchain',
          token: 'USDC',
          to,
          token_amount: '1000000',
        });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const otherApp = newAppId();
    const theirRequest = await paymentRequest(otherApp, (await apiKeyFor(h, otherApp)).api_key);
    const ownElsewhere = await paymentRequest(appId, apiKey);
    const naming = (id: string) => ({ ...asks, extra: { ...asks.extra, payment_request_id: id } });
    const sentBefore = await sentWithPending();
    await chain.rpc('miner_stop');
    try {
      const first = await settle(payment, asks);
      expect(first.body).toMatchObject({ success: false, errorReason: 'settlement_in_progress' });
      const hash = (first.body as SettleResponse).transaction;
      await chain.rpc('evm_mine');
      // another app's request, and the app's own request to another address: refused, the claim left as it was.
      // Requirements naming another payment request are not the claim's (024_x402_claim_purpose.sql)
      for (const id of [theirRequest, ownElsewhere]) {
        const refused = await settle(payment, naming(id));
        expect(refused.body).toMatchObject({
          success: false,
          errorReason: 'invalid_exact_evm_nonce_already_used',
          errorMessage: expect.stringContaining('other payment requirements'),
          transaction: '',
          payer: buyer.address,
        });
        expect(await settlementStore(h.storage.db).find(claimKeyOf(payment))).toMatchObject({ outcome: null });
        expect(await recorded(hash)).toEqual([]);
      }
      // a claim from before 024 (what it pays for unknown): the checks a first settle makes still refuse them
      await h.storage.db.query(
        'UPDATE x402_settlements SET resource = NULL, requirements_hash = NULL WHERE nonce = $1',
        [claimKeyOf(payment).nonce],
      );
      for (const id of [theirRequest, ownElsewhere]) {
        const refused = await settle(payment, naming(id));
        expect(refused.body).toMatchObject({
          success: false,
          errorReason: 'invalid_payment_requirements',
          transaction: hash,
          payer: buyer.address,
        });
        expect(await settlementStore(h.storage.db).find(claimKeyOf(payment))).toMatchObject({ outcome: null });
        expect(await recorded(hash)).toEqual([]);
      }
      const done = await settle(payment, asks);
      expect(done.body).toMatchObject({ success: true, transaction: hash });
      const rows = await h.storage.db.query<{ payment_request_id: string | null }>(
        'SELECT payment_request_id FROM transactions WHERE transaction_hash = $1',
        [hash],
      );
      expect(rows).toEqual([{ payment_request_id: null }]);
      expect(await sentWithPending()).toBe(sentBefore + 1);
    } finally {
      await chain.rpc('miner_start');
    }
  });

  it('a stored hash that never reached the chain holds the authorization until it expires, then ends: nothing moved', async () => {
    const store = settlementStore(h.storage.db);
    const buyer = newAccount();
    await x402.mint(buyer.address, 2_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const now = BigInt(Math.floor(Date.now() / 1000));
    // a replica claimed, signed and stored the hash, and stopped before broadcasting
    const strand = async (payment: PaymentPayload) => {
      const key = claimKeyOf(payment);
      const { validAfter, validBefore } = (payment.payload as { authorization: Authorization }).authorization;
      const claim = { appId, payTo: seller.toLowerCase(), value: '1000000', leaseMs: -1000 };
      const fence = await store.claim(key, { ...claim, validAfter, validBefore });
      expect(fence).toBe(1);
      const hash = `0x${randomBytes(32).toString('hex')}`;
      expect(await store.setTransactionHash(key, fence!, hash, -1000)).toBe(true);
      return hash;
    };
    const sentBefore = await sentWithPending();

    // still valid: it might yet land, so it stays held
    const live = await signedPayment(buyer, asks, { validBefore: now + 300n });
    const liveHash = await strand(live);
    const held = await settle(live, asks);
    expect(held.body).toMatchObject({ success: false, errorReason: 'settlement_in_progress', transaction: liveHash });
    expect(await store.find(claimKeyOf(live))).toMatchObject({ transactionHash: liveHash, outcome: null });

    // expired on chain (the latest block is past validBefore): it can never move funds, so it ends
    const expired = await signedPayment(buyer, asks, { validBefore: now - 5n });
    await strand(expired);
    await chain.rpc('evm_mine');
    const ended = await settle(expired, asks);
    expect(ended.body).toEqual({
      success: false,
      errorReason: 'invalid_exact_evm_payload_authorization_valid_before',
      errorMessage: expect.stringContaining('never reached the chain'),
      transaction: '',
      network: 'eip155:1337',
      payer: buyer.address,
    });
    expect((await store.find(claimKeyOf(expired)))?.outcome).toEqual(ended.body);
    expect((await settle(expired, asks)).body).toEqual(ended.body);
    expect(await sentWithPending()).toBe(sentBefore);
    expect(await x402.balanceOf(buyer.address)).toBe(2_000_000n);
  });
});
