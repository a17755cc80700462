import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { Hex } from 'viem';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { purposeOf } from '../src/x402/payment-purpose';
import { settlementStore, type Claim } from '../src/x402/settlement-store';
import { authorizationKey } from '../src/x402/verify';
import { Relayer, x402Client, x402Transport, type Authorization } from '../src/x402/x402-chain';
import { newAppId, type TransactionsHarness } from './support';
import type { LocalChain } from './support/local-chain';
import { x402Facilitator } from './support/x402-facilitator';
import { newAccount, requirementsFor, signedPayment, type X402Chain } from './support/x402';

const USED = 'invalid_exact_evm_nonce_already_used';
const SIGNATURE = 'invalid_exact_evm_signature';

type Signed = { authorization: Authorization; signature: Hex };
const signedOf = (p: PaymentPayload) => p.payload as Signed;
const withPayload = (p: PaymentPayload, payload: Signed): PaymentPayload => ({ ...p, payload });
const identified = (p: PaymentPayload, url: string, id?: string): PaymentPayload => ({
  ...p,
  resource: { url, description: '', mimeType: '' },
  ...(id ? { extensions: { 'payment-identifier': { info: { required: false, id } } } } : {}),
});

/**
 * Review findings (issue 43) on a settle of an authorization already claimed. It answered the claim's outcome
 * without checking the presented payload: a copy with a signature that is not the payer's was answered the
 * first success; the rule for claims from before 024 ("expired, so its success answers nothing") read the
 * presented validBefore; and a settle taking over another one's transaction recorded it from the presented
 * payload. The presented authorization's signature is now checked as verify checks it, its fields must be the
 * claim's, and what is answered and recorded is read from the claim (which keeps the validity since 025).
 */
describe('x402: a settle of a claimed authorization checks what it is presented (ganache)', () => {
  let chain: LocalChain;
  let x402: X402Chain;
  let h: TransactionsHarness;
  const appId = newAppId();
  let apiKey: string;
  const seller = newAccount().address;
  let relayerKey: Hex;
  let relayer: `0x${string}`;

  beforeAll(async () => {
    ({ chain, x402, h, apiKey, relayer, relayerKey } = await x402Facilitator(appId, [seller], {
      X402_RECEIPT_TIMEOUT_SECONDS: '1',
    }));
  }, 120000);
  afterAll(async () => {
    await h?.close();
    await chain?.close();
  });

  const settle = (payload: PaymentPayload, requirements: PaymentRequirements) =>
    request(h.publicApp)
      .post('/x402/settle')
      .set('Authorization', `Bearer ${apiKey}`)
      .send({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });
  const keyOf = (p: PaymentPayload) => authorizationKey('eip155:1337', x402.token, signedOf(p).authorization);
  const recordedFrom = async (payer: string) =>
    h.storage.db.query<{ transaction_hash: string; reference: string; token_amount: string; to_address: string }>(
      'SELECT transaction_hash, reference, token_amount, to_address FROM transactions WHERE from_address = $1',
      [payer.toLowerCase()],
    );
  /** A replica claimed the payment (as settle claims it, or as before 025 when `validity` is false), sent its transaction and stopped. */
  const claimSendAndStop = async (payment: PaymentPayload, asks: PaymentRequirements, claim: Partial<Claim> = {}) => {
    const { authorization, signature } = signedOf(payment);
    const key = keyOf(payment);
    const fence = await settlementStore(h.storage.db).claim(key, {
      appId,
      payTo: seller.toLowerCase(),
      value: authorization.value,
      leaseMs: -1000,
      purpose: purposeOf(payment, asks),
      validAfter: authorization.validAfter,
      validBefore: authorization.validBefore,
      ...claim,
    });
    expect(fence).toBe(1);
    const transport = x402Transport([chain.url], 10000);
    const sender = new Relayer(x402Client(transport), transport, relayerKey, 1337, h.storage.db);
    return sender.submit(x402.token, authorization, signature, async (hash, db) => {
      expect(await settlementStore(db).setTransactionHash(key, fence!, hash, -1000)).toBe(true);
    });
  };

  it('a settled authorization presented again with a signature that is not the payer’s is refused, not answered', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 1_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const paid = identified(await signedPayment(buyer, asks), 'http://seller.test/report');
    const first = await settle(paid, asks);
    expect(first.body).toMatchObject({ success: true });
    const sentBefore = await x402.sent(relayer);
    // a stranger's copy: the same fields (public on chain once sent), a signature that is not the payer's
    const forged = withPayload(paid, { ...signedOf(paid), signature: `0x${'11'.repeat(65)}` });
    expect((await settle(forged, asks)).body).toEqual({
      success: false,
      errorReason: SIGNATURE,
      errorMessage: expect.stringContaining('not the payer’s'),
      transaction: '',
      network: 'eip155:1337',
      payer: buyer.address,
    });
    // one signed by another key for the payer's address, likewise
    const { nonce, validAfter, validBefore } = signedOf(paid).authorization;
    const stranger = await signedPayment(buyer, asks, {
      nonce,
      validAfter: BigInt(validAfter),
      validBefore: BigInt(validBefore),
      signer: newAccount(),
    });
    expect((await settle(withPayload(paid, signedOf(stranger)), asks)).body).toMatchObject({ errorReason: SIGNATURE });
    // the payer's own retry still answers the first outcome, word for word
    expect((await settle(paid, asks)).body).toEqual(first.body);
    expect(await x402.sent(relayer)).toBe(sentBefore);
  });

  it('the payer’s other authorization with a claimed nonce (another value or validity) is not the claim’s: refused', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 2_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const paid = identified(await signedPayment(buyer, asks), 'http://seller.test/report');
    const first = await settle(paid, asks);
    expect(first.body).toMatchObject({ success: true });
    const { nonce, validBefore } = signedOf(paid).authorization;
    for (const other of [{ value: 2_000_000n }, { validBefore: BigInt(validBefore) + 3600n }]) {
      const resigned = identified(await signedPayment(buyer, asks, { nonce, ...other }), 'http://seller.test/report');
      expect((await settle(resigned, asks)).body).toMatchObject({
        success: false,
        errorReason: USED,
        errorMessage: expect.stringContaining('claimed by another authorization'),
      });
    }
    expect(await x402.balanceOf(buyer.address)).toBe(1_000_000n);
  });

  it('a claim from before 024, its authorization expired, is not revived by a validBefore raised in the request', async () => {
    const buyer = newAccount();
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const now = BigInt(Math.floor(Date.now() / 1000));
    const store = settlementStore(h.storage.db);
    const success = (tx: string) =>
      ({ success: true, payer: buyer.address, transaction: tx, network: 'eip155:1337', amount: '1000000' }) as const;
    const settledBefore024 = async (payment: PaymentPayload, validity: boolean) => {
      const { validAfter, validBefore } = signedOf(payment).authorization;
      const claim = { appId, payTo: seller.toLowerCase(), value: '1000000', leaseMs: 60000 };
      expect(await store.claim(keyOf(payment), validity ? { ...claim, validAfter, validBefore } : claim)).toBe(1);
      await store.finish(keyOf(payment), success(`0x${randomBytes(32).toString('hex')}`), null);
    };
    for (const validity of [true, false]) {
      // settled (successfully) before 024: no resource, no requirements hash; expired a minute ago
      const expired = identified(await signedPayment(buyer, asks, { validBefore: now - 60n }), 'http://seller.test/b');
      await settledBefore024(expired, validity);
      expect((await settle(expired, asks)).body).toMatchObject({ success: false, errorReason: USED });
      // raised in the request without the payer's signature: refused
      const { authorization, signature } = signedOf(expired);
      const raised = withPayload(expired, {
        signature,
        authorization: { ...authorization, validBefore: '99999999999' },
      });
      expect((await settle(raised, asks)).body).toMatchObject({ success: false, errorReason: SIGNATURE });
      // signed again by the payer with the same nonce and a later validBefore: still not the claim's
      const resigned = identified(
        await signedPayment(buyer, asks, { nonce: authorization.nonce, validBefore: 99999999999n }),
        'http://seller.test/b',
      );
      expect((await settle(resigned, asks)).body).toMatchObject({ success: false, errorReason: USED });
    }
    // one still valid, whose claim kept its validBefore (025), answers its retries as before 024 did
    const valid = identified(await signedPayment(buyer, asks), 'http://seller.test/c');
    await settledBefore024(valid, true);
    expect((await settle(valid, asks)).body).toMatchObject({ success: true });
  });

  it('a settle finishing another one’s transaction records and answers what the claim stored, for its own payer only', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 3_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const id = `pay_${randomBytes(12).toString('hex')}`;
    const paid = identified(await signedPayment(buyer, asks), 'http://seller.test/report', id);
    const hash = await claimSendAndStop(paid, asks, { paymentId: id });
    const sentAfter = await x402.sent(relayer);
    const store = settlementStore(h.storage.db);
    const held = await store.find(keyOf(paid));
    // a forged copy, or the payer's other authorization with this nonce: refused, the claim left as it was
    const forged = withPayload(paid, { ...signedOf(paid), signature: `0x${'22'.repeat(65)}` });
    expect((await settle(forged, asks)).body).toMatchObject({ success: false, errorReason: SIGNATURE });
    const more = await signedPayment(buyer, asks, { nonce: signedOf(paid).authorization.nonce, value: 3_000_000n });
    expect((await settle(identified(more, 'http://seller.test/report', id), asks)).body).toMatchObject({
      success: false,
      errorReason: USED,
    });
    expect(await store.find(keyOf(paid))).toEqual(held);
    expect(await recordedFrom(buyer.address)).toEqual([]);
    // the payer's retry, naming another payment-identifier: finished from the claim, recorded under its id
    const finished = await settle(identified(paid, 'http://seller.test/report', `${id}x`), asks);
    expect(finished.body).toEqual({
      success: true,
      payer: buyer.address,
      transaction: hash,
      network: 'eip155:1337',
      amount: '1000000',
      extra: { transaction_id: expect.any(String) },
    });
    expect(await recordedFrom(buyer.address)).toEqual([
      { transaction_hash: hash, reference: `x402:id:${id}`, token_amount: '1000000', to_address: seller.toLowerCase() },
    ]);
    expect(await x402.sent(relayer)).toBe(sentAfter);
  });

  it('a claim from before 025 whose transaction never reached the chain is not ended by the request’s validBefore', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 1_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const now = BigInt(Math.floor(Date.now() / 1000));
    const store = settlementStore(h.storage.db);
    // expired, claimed as before 025 (no validity kept), signed and its hash stored, never broadcast
    const expired = identified(await signedPayment(buyer, asks, { validBefore: now - 5n }), 'http://seller.test/r');
    const claim = { appId, payTo: seller.toLowerCase(), value: '1000000', leaseMs: -1000 };
    expect(await store.claim(keyOf(expired), { ...claim, purpose: purposeOf(expired, asks) })).toBe(1);
    const hash = `0x${randomBytes(32).toString('hex')}`;
    expect(await store.setTransactionHash(keyOf(expired), 1, hash, -1000)).toBe(true);
    await chain.rpc('evm_mine');
    // its validBefore is the request's word only: the claim stays in flight (nothing is sent again)
    const answer = await settle(expired, asks);
    expect(answer.body).toMatchObject({ success: false, errorReason: 'settlement_in_progress', transaction: hash });
    expect(await store.find(keyOf(expired))).toMatchObject({ transactionHash: hash, outcome: null });
    expect(await x402.balanceOf(buyer.address)).toBe(1_000_000n);
  });

  it('a payment-identifier held by a claim abandoned before sending anything is settled by a new authorization', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 2_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const id = `pay_${randomBytes(12).toString('hex')}`;
    const stalled = identified(await signedPayment(buyer, asks), 'http://seller.test/report', id);
    const store = settlementStore(h.storage.db);
    // a replica claimed it and stopped before sending: no transaction hash, its lease over
    const claim = { appId, payTo: seller.toLowerCase(), value: '1000000', leaseMs: -1000, paymentId: id };
    expect(await store.claim(keyOf(stalled), { ...claim, purpose: purposeOf(stalled, asks) })).toBe(1);
    const sentBefore = await x402.sent(relayer);
    const fresh = await settle(identified(await signedPayment(buyer, asks), 'http://seller.test/report', id), asks);
    expect(fresh.body).toMatchObject({ success: true, payer: buyer.address, amount: '1000000' });
    expect(await store.find(keyOf(stalled))).toMatchObject({ paymentId: null, fence: 2, transactionHash: null });
    // the abandoned authorization, retried, would move funds a second time for one id: refused, nothing sent
    expect((await settle(stalled, asks)).body).toMatchObject({
      success: false,
      errorReason: 'payment_identifier_already_used',
    });
    expect(await x402.sent(relayer)).toBe(sentBefore + 1);
    expect(await x402.balanceOf(buyer.address)).toBe(1_000_000n);
    expect((await recordedFrom(buyer.address)).map((r) => r.reference)).toEqual([`x402:id:${id}`]);
  });
});
