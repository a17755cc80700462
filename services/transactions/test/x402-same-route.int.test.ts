import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { x402Client } from '@x402/core/client';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm/exact/client';
import { paymentMiddleware } from '@x402/express';
import { newAppId, type TransactionsHarness } from './support';
import type { LocalChain } from './support/local-chain';
import { attestResourceServer, x402Facilitator } from './support/x402-facilitator';
import { newAccount, TOKEN_NAME, TOKEN_VERSION, type X402Chain } from './support/x402';

/**
 * Issue 43, a documented limit (docs/payments.md, "x402"): one payment header sent several times at once to the
 * same paid route of an @x402/express seller. @x402/express verifies, runs the handler, then settles: every
 * request verifies before the first settle claims the authorization; that settle moves the funds, and every
 * other is a retry of the same payment (same app, resource and requirements), answered the first outcome, as a
 * retried settle must be. So each is served, for one transfer. Once the authorization is claimed, verify
 * refuses it: a request after that is answered 402.
 */
describe('x402: one header, same route, at once (ganache)', () => {
  let chain: LocalChain;
  let x402: X402Chain;
  let h: TransactionsHarness;
  const appId = newAppId();
  let apiKey: string;
  const seller = newAccount().address;
  let relayer: `0x${string}`;
  const servers: http.Server[] = [];

  beforeAll(async () => {
    ({ chain, x402, h, apiKey, relayer } = await x402Facilitator(appId, [seller]));
  }, 120000);
  afterAll(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
    await h?.close();
    await chain?.close();
  });

  async function listen(app: http.RequestListener): Promise<string> {
    const server = http.createServer(app);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('three identical requests at once: three paid responses, one transfer; a request after the claim is refused', async () => {
    const N = 3;
    const buyer = newAccount();
    await x402.mint(buyer.address, 1_000_000n);
    const resourceServer = attestResourceServer(await listen(h.publicApp), apiKey);
    const accepts = {
      scheme: 'exact',
      network: 'eip155:1337' as const,
      payTo: seller,
      price: {
        amount: '1000000',
        asset: x402.token,
        extra: { name: TOKEN_NAME, version: TOKEN_VERSION, route: 'GET /report' },
      },
    };
    const shop = express();
    shop.use(paymentMiddleware({ 'GET /report': { accepts, description: 'report' } }, resourceServer));
    // a barrier, not a clock: the handler answers once all N requests reached it (all verified, none settled)
    let arrived = 0;
    let release: () => void = () => undefined;
    const allIn = new Promise<void>((resolve) => (release = resolve));
    shop.get('/report', async (_req, res) => {
      arrived += 1;
      if (arrived === N) release();
      await allIn;
      res.json({ content: 'the paid report' });
    });
    const shopUrl = await listen(shop);
    const first = await fetch(`${shopUrl}/report`);
    expect(first.status).toBe(402);
    const client = x402Client.fromConfig({
      schemes: [{ network: 'eip155:1337', client: new ExactEvmClient(buyer) }],
      spendControls: {
        allowedAssets: [{ network: 'eip155:1337', asset: x402.token, maxAmountPerPayment: '1000000' }],
      },
    });
    const required = decodePaymentRequiredHeader(first.headers.get('PAYMENT-REQUIRED')!);
    const payload = await client.createPaymentPayload(required);
    const header = encodePaymentSignatureHeader(payload);
    const sentBefore = await x402.sent(relayer);

    const answers = await Promise.all(
      Array.from({ length: N }, () => fetch(`${shopUrl}/report`, { headers: { 'PAYMENT-SIGNATURE': header } })),
    );
    const bodies = await Promise.all(answers.map((a) => a.text()));

    // one transfer on chain, the buyer charged once
    expect(await x402.sent(relayer)).toBe(sentBefore + 1);
    expect(await x402.balanceOf(buyer.address)).toBe(0n);
    // the documented limit: every one of the N requests was served the paid content (retries of one payment)
    expect(answers.map((a) => a.status)).toEqual(Array(N).fill(200));
    expect(bodies.every((b) => b.includes('the paid report'))).toBe(true);
    // each answer carries the one transfer's settlement: a seller can key once-per-payment work on it
    const settled = answers.map((a) => decodePaymentResponseHeader(a.headers.get('PAYMENT-RESPONSE')!));
    expect(new Set(settled.map((r) => r.transaction)).size).toBe(1);
    expect(settled[0]).toMatchObject({ success: true, extra: { transaction_id: expect.any(String) } });
    expect(settled.every((r) => JSON.stringify(r) === JSON.stringify(settled[0]))).toBe(true);
    // once claimed (here settled), verify refuses the authorization: the same header again is not served
    arrived = 0;
    const later = await fetch(`${shopUrl}/report`, { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(later.status).toBe(402);
    expect(arrived).toBe(0);
    expect(await x402.sent(relayer)).toBe(sentBefore + 1);
  });
});
