import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm/exact/client';
import { paymentMiddleware } from '@x402/express';
import { purposeOf } from '../src/x402/payment-purpose';
import { settlementStore } from '../src/x402/settlement-store';
import { authorizationKey } from '../src/x402/verify';
import type { Authorization } from '../src/x402/x402-chain';
import { apiKeyFor, newAppId, type TransactionsHarness } from './support';
import type { LocalChain } from './support/local-chain';
import { attestResourceServer, x402Facilitator } from './support/x402-facilitator';
import { newAccount, requirementsFor, signedPayment, TOKEN_NAME, TOKEN_VERSION, type X402Chain } from './support/x402';

const USED = 'invalid_exact_evm_nonce_already_used';

/**
 * Issue 43, "one payment must never buy two resources": the same EIP-3009 authorization sent at once to two
 * resources of one seller (the same payTo) settles once, for one of them; the other is refused as an
 * already-used authorization. A retry of the payment for its own resource answers its first outcome.
 */
describe('x402: one authorization pays for one resource (ganache)', () => {
  let chain: LocalChain;
  let x402: X402Chain;
  let h: TransactionsHarness;
  const appId = newAppId();
  let apiKey: string;
  const seller = newAccount().address;
  let relayer: `0x${string}`;

  beforeAll(async () => {
    ({ chain, x402, h, apiKey, relayer } = await x402Facilitator(appId, [seller]));
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
  const verify = (payload: PaymentPayload, requirements: PaymentRequirements) =>
    request(h.publicApp)
      .post('/x402/verify')
      .set('Authorization', `Bearer ${apiKey}`)
      .send({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });
  const recordedFrom = async (payer: string) =>
    (
      await h.storage.db.query<{ transaction_hash: string }>(
        'SELECT transaction_hash FROM transactions WHERE from_address = $1',
        [payer.toLowerCase()],
      )
    ).map((r) => r.transaction_hash);
  /** The one answer that succeeded and the other, whichever settled first. */
  const split = (answers: { body: SettleResponse }[]) => {
    const won = answers.filter((a) => a.body.success);
    expect(won).toHaveLength(1);
    return { won: won[0].body, lost: answers.find((a) => !a.body.success)!.body };
  };

  it('two resources of one seller at once: one settles, the other is refused naming the resource; retries answer their own', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 3_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const forA = { ...(await signedPayment(buyer, asks)), resource: { url: 'http://seller.test/a' } };
    const forB = { ...forA, resource: { url: 'http://seller.test/b' } };
    const sentBefore = await x402.sent(relayer);
    const answers = await Promise.all([settle(forA, asks), settle(forB, asks)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const { won, lost } = split(answers);
    const winner = answers[0].body.success ? forA : forB;
    const loser = winner === forA ? forB : forA;
    expect(won).toMatchObject({ success: true, payer: buyer.address, amount: '1000000' });
    expect(lost).toEqual({
      success: false,
      errorReason: USED,
      errorMessage: expect.stringContaining(`another resource (${winner.resource.url})`),
      transaction: '',
      network: 'eip155:1337',
      payer: buyer.address,
    });
    // a retry of the payment for its resource: its first outcome; the other resource: still refused
    expect((await settle(winner, asks)).body).toEqual(won);
    expect((await settle(loser, asks)).body).toEqual(lost);
    // verify refuses the claimed authorization for either resource
    for (const payload of [winner, loser])
      expect((await verify(payload, asks)).body).toMatchObject({ isValid: false, invalidReason: USED });
    // one transfer on chain, one recorded transaction
    expect(await x402.sent(relayer)).toBe(sentBefore + 1);
    expect(await x402.balanceOf(seller)).toBe(1_000_000n);
    expect(await x402.balanceOf(buyer.address)).toBe(2_000_000n);
    expect(await recordedFrom(buyer.address)).toEqual([won.transaction]);
    const [claim] = await h.storage.db.query<{ resource: string; requirements_hash: string }>(
      'SELECT resource, requirements_hash FROM x402_settlements WHERE payer = $1',
      [buyer.address.toLowerCase()],
    );
    expect(claim).toEqual({
      resource: winner.resource.url,
      requirements_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it('one resource with other requirements (a lower price, a route the seller marks in extra) is refused', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 3_000_000n);
    const full = requirementsFor(x402.token, seller, 1_000_000n);
    const cheaper = { ...full, amount: '400000' };
    const marked = { ...full, extra: { ...full.extra, route: 'GET /other' } };
    const payment = await signedPayment(buyer, full);
    const sentBefore = await x402.sent(relayer);
    const answers = await Promise.all([settle(payment, full), settle(payment, cheaper)]);
    const { won, lost } = split(answers);
    expect(lost).toMatchObject({
      success: false,
      errorReason: USED,
      errorMessage: expect.stringContaining('other payment requirements'),
      transaction: '',
    });
    const winning = answers[0].body.success ? full : cheaper;
    expect((await settle(payment, winning)).body).toEqual(won);
    expect((await settle(payment, marked)).body).toMatchObject({ success: false, errorReason: USED });
    // the same requirements with their keys in another order and the addresses in another case: a retry
    const reordered = Object.fromEntries(Object.entries(winning).reverse()) as PaymentRequirements;
    const lowerCase = { ...reordered, asset: winning.asset.toLowerCase(), payTo: winning.payTo.toLowerCase() };
    expect((await settle(payment, lowerCase)).body).toEqual(won);
    expect(await x402.sent(relayer)).toBe(sentBefore + 1);
    expect(await recordedFrom(buyer.address)).toEqual([won.transaction]);
  });

  it('two sellers at once: the app that claimed it settles; the other is refused, nothing sent twice', async () => {
    const otherApp = newAppId();
    const otherKey = (await apiKeyFor(h, otherApp)).api_key;
    const buyer = newAccount();
    await x402.mint(buyer.address, 1_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const payment = await signedPayment(buyer, asks);
    const sentBefore = await x402.sent(relayer);
    const answers = await Promise.all([settle(payment, asks), settle(payment, asks, otherKey)]);
    expect(answers[0].body).toMatchObject({ success: true, payer: buyer.address });
    // the other app did not register payTo; had it claimed first, the first answer would be settled_by_another_app
    expect(answers[1].body).toMatchObject({ success: false, transaction: '' });
    expect(['recipient_not_registered', 'settled_by_another_app']).toContain(answers[1].body.errorReason);
    expect(await x402.sent(relayer)).toBe(sentBefore + 1);
    expect(await recordedFrom(buyer.address)).toEqual([answers[0].body.transaction]);
  });

  it('two authorizations with one payment-identifier at once: one settles, the other is refused, nothing sent twice', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 2_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const id = `pay_${randomBytes(12).toString('hex')}`;
    const identified = async (url: string) => ({
      ...(await signedPayment(buyer, asks)),
      resource: { url },
      extensions: { 'payment-identifier': { info: { required: false, id } } },
    });
    const sentBefore = await x402.sent(relayer);
    const answers = await Promise.all([
      settle(await identified('http://seller.test/a'), asks),
      settle(await identified('http://seller.test/b'), asks),
    ]);
    const { won, lost } = split(answers);
    expect(lost).toEqual({
      success: false,
      errorReason: 'payment_identifier_already_used',
      errorMessage: expect.stringContaining(`x402:id:${id}`),
      transaction: '',
      network: 'eip155:1337',
      payer: buyer.address,
    });
    expect(await x402.sent(relayer)).toBe(sentBefore + 1);
    expect(await x402.balanceOf(buyer.address)).toBe(1_000_000n);
    expect(await recordedFrom(buyer.address)).toEqual([won.transaction]);
  });

  it('a claim whose settle stopped before sending anything is taken over only by a retry of its payment', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 1_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const forA = { ...(await signedPayment(buyer, asks)), resource: { url: 'http://seller.test/a' } };
    const forB = { ...forA, resource: { url: 'http://seller.test/b' } };
    const authorization = (forA.payload as { authorization: Authorization }).authorization;
    // a replica claimed it for /a and stopped: no transaction hash, its lease over
    const key = authorizationKey('eip155:1337', x402.token, authorization);
    const claim = { appId, payTo: seller.toLowerCase(), value: '1000000', leaseMs: -1000 };
    expect(await settlementStore(h.storage.db).claim(key, { ...claim, purpose: purposeOf(forA, asks) })).toBe(1);
    const sentBefore = await x402.sent(relayer);
    // for /b: verify and settle refuse it; for /a (a retry): valid, and settled once
    expect((await verify(forB, asks)).body).toMatchObject({
      isValid: false,
      invalidReason: USED,
      invalidMessage: expect.stringContaining('another resource'),
    });
    expect((await settle(forB, asks)).body).toMatchObject({ success: false, errorReason: USED, transaction: '' });
    expect((await verify(forA, asks)).body).toMatchObject({ isValid: true });
    const settled = await settle(forA, asks);
    expect(settled.body).toMatchObject({ success: true, payer: buyer.address });
    expect(await x402.sent(relayer)).toBe(sentBefore + 1);
    expect(await recordedFrom(buyer.address)).toEqual([settled.body.transaction]);
  });

  it('a claim from before resources were kept (no hash) answers retries of its authorization while it is valid', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 1_000_000n);
    const asks = requirementsFor(x402.token, seller, 1_000_000n);
    const payment = await signedPayment(buyer, asks);
    const first = await settle(payment, asks);
    expect(first.body).toMatchObject({ success: true });
    await h.storage.db.query('UPDATE x402_settlements SET resource = NULL, requirements_hash = NULL WHERE payer = $1', [
      buyer.address.toLowerCase(),
    ]);
    // as before 024: its payTo, amount and human proof decide (payment-purpose.ts; expired, it is refused)
    expect((await settle(payment, asks)).body).toEqual(first.body);
    expect((await settle(payment, { ...asks, payTo: newAccount().address })).body).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_recipient_mismatch',
    });
    expect(await recordedFrom(buyer.address)).toEqual([first.body.transaction]);
  });

  it('@x402/express, two routes of one seller: one payment made for one, sent to both at once, buys one', async () => {
    const buyer = newAccount();
    await x402.mint(buyer.address, 3_000_000n);
    const resourceServer = attestResourceServer(await listen(h.publicApp), apiKey);
    const accepts = {
      scheme: 'exact',
      network: 'eip155:1337' as const,
      payTo: seller,
      price: { amount: '1000000', asset: x402.token, extra: { name: TOKEN_NAME, version: TOKEN_VERSION } },
    };
    const shop = express();
    shop.use(
      paymentMiddleware(
        {
          'GET /a': { accepts, description: 'A' },
          'GET /b': { accepts, description: 'B' },
          // routes that bind themselves in their requirements (payments.md, "Settle")
          'GET /c': { accepts: { ...accepts, extra: { route: 'GET /c' } }, description: 'C' },
          'GET /d': { accepts: { ...accepts, extra: { route: 'GET /d' } }, description: 'D' },
        },
        resourceServer,
      ),
    );
    let delivered = 0;
    shop.get(['/a', '/b', '/c', '/d'], (req, res) => {
      delivered += 1;
      res.json({ content: req.path });
    });
    const shopUrl = await listen(shop);
    const sentBefore = await x402.sent(relayer);
    try {
      const asked = async (path: string) => {
        const res = await fetch(`${shopUrl}${path}`);
        expect(res.status).toBe(402);
        return decodePaymentRequiredHeader(res.headers.get('PAYMENT-REQUIRED')!);
      };
      // the buyer signs one authorization for /a, and presents it for /b as its client would for /b
      const client = x402Client.fromConfig({
        schemes: [{ network: 'eip155:1337', client: new ExactEvmClient(buyer) }],
        spendControls: {
          allowedAssets: [{ network: 'eip155:1337', asset: x402.token, maxAmountPerPayment: '1000000' }],
        },
      });
      const forA = await client.createPaymentPayload(await asked('/a'));
      const requiredB = await asked('/b');
      const forB: PaymentPayload = { ...forA, resource: requiredB.resource, accepted: requiredB.accepts[0] };
      const get = (path: string, payload: PaymentPayload) =>
        fetch(`${shopUrl}${path}`, { headers: { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) } });
      const [a, b] = await Promise.all([get('/a', forA), get('/b', forB)]);
      const statuses = [a.status, b.status].sort();
      expect(statuses).toEqual([200, 402]);
      const paid = a.status === 200 ? a : b;
      const refused = a.status === 200 ? b : a;
      expect(await paid.json()).toEqual({ content: a.status === 200 ? '/a' : '/b' });
      expect(await refused.text()).not.toContain('content');
      expect(await x402.sent(relayer)).toBe(sentBefore + 1);
      expect(await x402.balanceOf(buyer.address)).toBe(2_000_000n);
      expect(await recordedFrom(buyer.address)).toHaveLength(1);
      // the handler may have run for both (the seller settles after it); only one answer carried the resource
      expect(delivered).toBeGreaterThanOrEqual(1);

      // routes with requirements of their own: a header copied unchanged to /d matches none of /d's, and one
      // whose accepted is /d's (the resource left /c's, as in a retry) carries other requirements: one buys
      const forC = await client.createPaymentPayload(await asked('/c'));
      const requiredD = await asked('/d');
      expect(requiredD.accepts[0].extra).toMatchObject({ route: 'GET /d', name: TOKEN_NAME });
      const asD: PaymentPayload = { ...forC, accepted: requiredD.accepts[0] };
      const [c, copied, d] = await Promise.all([get('/c', forC), get('/d', forC), get('/d', asD)]);
      expect(copied.status).toBe(402);
      expect([c.status, d.status].sort()).toEqual([200, 402]);
      const [won, lost] = c.status === 200 ? [c, d] : [d, c];
      expect(await won.json()).toEqual({ content: won === c ? '/c' : '/d' });
      for (const r of [copied, lost]) expect(await r.text()).not.toContain('content');
      expect(await x402.sent(relayer)).toBe(sentBefore + 2);
      expect(await x402.balanceOf(buyer.address)).toBe(1_000_000n);
      expect(await recordedFrom(buyer.address)).toHaveLength(2);
    } finally {
      await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
    }
  });

  const servers: http.Server[] = [];
  async function listen(app: http.RequestListener): Promise<string> {
    const server = http.createServer(app);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
});
