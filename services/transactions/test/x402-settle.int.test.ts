import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import { encrypt } from '@attest/common';
import { ReceivingAddressService, signatureVerifier } from '../src/receiving-addresses';
import { apiKeyFor, newAppId, transactionsHarness, type TransactionsHarness } from './support';
import { localChain, type LocalChain } from './support/local-chain';
import { eventOf, WebhookReceiver } from './support/webhook-receiver';
import {
  deployX402Token,
  newAccount,
  requirementsFor,
  signedPayment,
  TOKEN_NAME,
  TOKEN_VERSION,
  type X402Chain,
} from './support/x402';

const KEY_ENCRYPTION_KEY = 'x402-test-key-encryption-key-0123456789abcdef';
const ETH = 10n ** 18n;
const operator = { type: 'operator' as const, id: 'test' };

/**
 * Issue 43, "Done when": @x402/fetch pays an @x402/express route whose facilitator is Attest (its HTTP
 * facilitator client with the app's API key) and gets the resource; the transfer is on chain, recorded once,
 * and a webhook says transaction.mined; the same authorization settles once (twice, or to two sellers).
 */
describe('x402 settle (ganache)', () => {
  let chain: LocalChain;
  let x402: X402Chain;
  /** A second EIP-3009 token, of 18 decimals (same EIP-712 name and version: only the contract tells them apart). */
  let wld: X402Chain;
  let h: TransactionsHarness;
  let attest: http.Server;
  let attestUrl: string;
  let receiver: WebhookReceiver;
  let receiving: ReceivingAddressService;
  const appId = newAppId();
  let apiKey: string;
  const seller = newAccount().address;
  const env = () => ({
    CHAIN_RPC_URL: chain.url,
    CHAIN_TOKENS: JSON.stringify({
      worldchain: { USDC: { address: x402.token, decimals: 6 }, WLD: { address: wld.token, decimals: 18 } },
    }),
    CHAIN_FINALITY: '1',
    CHAIN_POLL_INTERVAL_MS: '100',
    KEY_ENCRYPTION_KEY,
    X402_RELAYER_KEY: encrypt(KEY_ENCRYPTION_KEY, relayerKey),
    WEBHOOK_POLL_INTERVAL_MS: '50',
    WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  let relayerKey: `0x${string}`;

  beforeAll(async () => {
    relayerKey = generatePrivateKey();
    chain = await localChain();
    x402 = await deployX402Token(chain);
    wld = await deployX402Token(chain, 18);
    await x402.fund(privateKeyToAccount(relayerKey).address, ETH);
    h = await transactionsHarness(env());
    attest = http.createServer(h.publicApp);
    await new Promise<void>((resolve) => attest.listen(0, '127.0.0.1', resolve));
    attestUrl = `http://127.0.0.1:${(attest.address() as AddressInfo).port}`;
    apiKey = (await apiKeyFor(h, appId)).api_key;
    receiving = new ReceivingAddressService(h.storage.db, signatureVerifier({}));
    await receiving.addByOperator(appId, 'worldchain', seller, operator);
    receiver = await new WebhookReceiver().start();
    expect((await h.admin('post', `/apps/${appId}/webhooks`).send({ url: receiver.url })).status).toBe(201);
  }, 120000);
  afterAll(async () => {
    await receiver?.stop();
    await new Promise((resolve) => attest?.close(resolve));
    await h?.close();
    await chain?.close();
  });

  const settle = (payload: PaymentPayload, requirements: PaymentRequirements, key = apiKey, app = h.publicApp) =>
    request(app)
      .post('/x402/settle')
      .set('Authorization', `Bearer ${key}`)
      .send({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });

  const recorded = (hash: string) =>
    h.storage.db.query<{
      app_id: string;
      type: string;
      token: string;
      token_amount: string;
      from: string;
      to: string;
      reference: string;
    }>(
      `SELECT app_id, type, token, token_amount::text AS token_amount, from_address AS "from", to_address AS "to", reference
       FROM transactions WHERE transaction_hash = $1`,
      [hash],
    );

  it('@x402/fetch pays an @x402/express route through Attest: on chain, recorded once, transaction.mined', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 3_000_000n);
    // the seller: an @x402/express route, Attest as its facilitator with the app's API key
    const auth = { Authorization: `Bearer ${apiKey}` };
    const facilitator = new HTTPFacilitatorClient({
      url: `${attestUrl}/x402`,
      createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
    });
    const resourceServer = new x402ResourceServer(facilitator).register('eip155:1337', new ExactEvmServer());
    const shop = express();
    shop.use(
      paymentMiddleware(
        {
          'GET /report': {
            accepts: {
              scheme: 'exact',
              network: 'eip155:1337',
              payTo: seller,
              price: { amount: '1000000', asset: x402.token, extra: { name: TOKEN_NAME, version: TOKEN_VERSION } },
            },
            description: 'A paid report',
          },
        },
        resourceServer,
      ),
    );
    shop.get('/report', (_req, res) => {
      res.json({ report: 'the paid content' });
    });
    const shopServer = http.createServer(shop);
    await new Promise<void>((resolve) => shopServer.listen(0, '127.0.0.1', resolve));
    try {
      const shopUrl = `http://127.0.0.1:${(shopServer.address() as AddressInfo).port}`;
      expect((await fetch(`${shopUrl}/report`)).status).toBe(402);
      // the buyer: @x402/fetch with a local wallet, allowed to pay this (non-default) token
      const pay = wrapFetchWithPaymentFromConfig(fetch, {
        schemes: [{ network: 'eip155:1337', client: new ExactEvmClient(buyer) }],
        spendControls: {
          allowedAssets: [{ network: 'eip155:1337', asset: x402.token, maxAmountPerPayment: '1000000' }],
        },
      });
      const res = await pay(`${shopUrl}/report`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ report: 'the paid content' });
      const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
      expect(receipt).toMatchObject({ success: true, network: 'eip155:1337', payer: buyer.address });
      const hash = receipt.transaction;
      expect(hash).toMatch(/^0x[0-9a-f]{64}$/);

      expect(await x402.balanceOf(seller)).toBe(1_000_000n);
      expect(await x402.balanceOf(buyer.address)).toBe(2_000_000n);
      const rows = await recorded(hash);
      expect(rows).toEqual([
        {
          app_id: appId,
          type: 'pay',
          token: 'USDC',
          token_amount: '1000000',
          from: buyer.address.toLowerCase(),
          to: seller.toLowerCase(),
          reference: expect.stringMatching(/^x402:0x[0-9a-f]{64} http:\/\/127\.0\.0\.1:\d+\/report$/),
        },
      ]);
      await chain.mine(2);
      const [mined] = await receiver.waitFor(1, (r) => {
        const event = eventOf(r);
        return event.type === 'transaction.mined' && event.data.transaction_hash === hash;
      });
      expect(eventOf(mined).data).toMatchObject({ app_id: appId, token: 'USDC', token_amount: '1000000' });
      const lookup = await request(h.publicApp)
        .get(`/api/v2/client/transaction/${String(eventOf(mined).data.transaction_id)}`)
        .query({ app_id: appId, type: 'pay' })
        .set('Authorization', `Bearer ${apiKey}`);
      expect(lookup.status).toBe(200);
      expect(lookup.body).toMatchObject({ transaction_hash: hash, transaction_status: 'mined' });
    } finally {
      await new Promise((resolve) => shopServer.close(resolve));
    }
  });

  it('settles an authorization once: a retry answers the first outcome, a second seller is refused', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 5_000_000n);
    const asks = requirementsFor(x402.token, seller, 2_000_000n);
    const payment = await signedPayment(buyer, asks);
    const sentBefore = await x402.sent(privateKeyToAccount(relayerKey).address);
    const sellerBefore = await x402.balanceOf(seller);
    const first = await settle(payment, asks);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      success: true,
      network: 'eip155:1337',
      payer: buyer.address,
      amount: '2000000',
    });
    const again = await settle(payment, asks);
    expect(again.body).toEqual(first.body);
    // the same app's other address, or a higher price: not a retry of this payment, so not its outcome
    const secondShop = newAccount().address;
    await receiving.addByOperator(appId, 'worldchain', secondShop, operator);
    const elsewhere = await settle(payment, { ...asks, payTo: secondShop });
    expect(elsewhere.body).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_recipient_mismatch',
      transaction: '',
      payer: buyer.address,
    });
    const dearer = await settle(payment, { ...asks, amount: '2000001' });
    expect(dearer.body).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_authorization_value' });
    expect((await settle(payment, asks)).body).toEqual(first.body);

    const otherApp = newAppId();
    const otherKey = (await apiKeyFor(h, otherApp)).api_key;
    const otherSeller = newAccount().address;
    await receiving.addByOperator(otherApp, 'worldchain', otherSeller, operator);
    const theirs = await settle(payment, { ...asks, payTo: otherSeller }, otherKey);
    expect(theirs.body).toMatchObject({ success: false, errorReason: 'settled_by_another_app', transaction: '' });

    expect(await x402.balanceOf(seller)).toBe(sellerBefore + 2_000_000n);
    expect(await x402.sent(privateKeyToAccount(relayerKey).address)).toBe(sentBefore + 1);
    expect(await recorded((first.body as SettleResponse).transaction)).toHaveLength(1);
    // verify now says the nonce is taken
    const verified = await request(h.publicApp)
      .post('/x402/verify')
      .set('Authorization', `Bearer ${apiKey}`)
      .send({ x402Version: 2, paymentPayload: payment, paymentRequirements: asks });
    expect(verified.body).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' });
  });

  it('records a payment-identifier as x402:id:<id>; another authorization with the same id is refused, nothing sent', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 3_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const id = `pay_${randomBytes(12).toString('hex')}`;
    const identified = async () => ({
      ...(await signedPayment(buyer, asks)),
      extensions: { 'payment-identifier': { info: { required: false, id } } },
    });
    const relayer = privateKeyToAccount(relayerKey).address;
    const sentBefore = await x402.sent(relayer);
    const first = await settle(await identified(), asks);
    expect(first.body).toMatchObject({ success: true, payer: buyer.address });
    expect(await recorded((first.body as SettleResponse).transaction)).toEqual([
      expect.objectContaining({ app_id: appId, reference: `x402:id:${id}`, token_amount: '1000000' }),
    ]);
    // a new authorization (another nonce) carrying the same payment-identifier: the buyer is not charged twice
    const second = await settle(await identified(), asks);
    expect(second.body).toEqual({
      success: false,
      errorReason: 'payment_identifier_already_used',
      errorMessage: expect.stringContaining(`x402:id:${id}`),
      transaction: '',
      network: 'eip155:1337',
      payer: buyer.address,
    });
    expect(await x402.sent(relayer)).toBe(sentBefore + 1);
    expect(await x402.balanceOf(buyer.address)).toBe(2_000_000n);
  });

  it('binds the asset and the amount: a token is paid only by an authorization signed for it, in its decimals', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 5_000_000n);
    await wld.mint(buyer.address, 5n * 10n ** 18n);
    const relayer = privateKeyToAccount(relayerKey).address;
    const sentBefore = await x402.sent(relayer);
    const inUsdc = requirementsFor(x402.token, seller, 1_000_000n);
    const inWld = requirementsFor(wld.token, seller, 10n ** 18n);
    // signed for USDC, presented as WLD (or the other way round): not the payer's signature over that token
    const usdcPayment = await signedPayment(buyer, inUsdc, { value: 10n ** 18n });
    const asWld = await settle({ ...usdcPayment, accepted: inWld }, inWld);
    expect(asWld.body).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_signature', transaction: '' });
    const wldPayment = await signedPayment(buyer, inWld, { value: 1_000_000n });
    const asUsdc = await settle({ ...wldPayment, accepted: inUsdc }, inUsdc);
    expect(asUsdc.body).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_signature', transaction: '' });
    // 1 WLD and one base unit (of 18 decimals) is finer than the 6 decimals a payment records: refused
    const fine = await settle(await signedPayment(buyer, inWld, { value: 10n ** 18n + 1n }), inWld);
    expect(fine.body).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_authorization_value' });
    expect(await x402.sent(relayer)).toBe(sentBefore);

    // 1 WLD: moved in its base units, recorded as WLD 1.000000
    const paid = await settle(await signedPayment(buyer, inWld), inWld);
    expect(paid.body).toMatchObject({ success: true, amount: '1000000000000000000', payer: buyer.address });
    expect(await recorded((paid.body as SettleResponse).transaction)).toEqual([
      expect.objectContaining({ app_id: appId, token: 'WLD', token_amount: '1000000', to: seller.toLowerCase() }),
    ]);
    expect(await wld.balanceOf(seller)).toBe(10n ** 18n);
    expect(await x402.balanceOf(buyer.address)).toBe(5_000_000n);
    expect(await x402.sent(relayer)).toBe(sentBefore + 1);
  });

  it('refuses to settle what verify refuses, submitting nothing', async () => {
    const buyer = newAccount();
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const sentBefore = await x402.sent(privateKeyToAccount(relayerKey).address);
    const res = await settle(await signedPayment(buyer, asks), asks);
    expect(res.body).toEqual({
      success: false,
      errorReason: 'invalid_exact_evm_insufficient_balance',
      errorMessage: expect.any(String),
      transaction: '',
      network: 'eip155:1337',
      payer: buyer.address,
    });
    expect(await x402.sent(privateKeyToAccount(relayerKey).address)).toBe(sentBefore);
  });

  it('shows the relayer balance on /metrics', async () => {
    const metrics = (await request(h.adminApp).get('/metrics').expect(200)).text;
    const line = metrics.split('\n').find((l) => l.startsWith('x402_relayer_balance_wei{'));
    expect(line).toContain(privateKeyToAccount(relayerKey).address);
    expect(Number(line!.split(' ').pop())).toBeGreaterThan(0);
    expect(Number(line!.split(' ').pop())).toBeLessThan(Number(ETH));
  });
});
