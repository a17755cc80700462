import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { encrypt } from '@attest/common';
import { replicaPair, type Replicas } from '@attest/testing';
import { ReceivingAddressService, signatureVerifier } from '../src/receiving-addresses';
import { settlementStore } from '../src/x402/settlement-store';
import { authorizationKey } from '../src/x402/verify';
import type { Authorization } from '../src/x402/x402-chain';
import { apiKeyFor, newAppId, transactionsHarness, type TransactionsHarness } from './support';
import { localChain, type LocalChain } from './support/local-chain';
import { deployX402Token, newAccount, requirementsFor, signedPayment, type X402Chain } from './support/x402';

const KEY_ENCRYPTION_KEY = 'x402-test-key-encryption-key-0123456789abcdef';
const ETH = 10n ** 18n;
const operator = { type: 'operator' as const, id: 'test' };

/**
 * Issue 43: a settle racing itself from two replicas submits one transaction; a relayer out of gas refuses
 * with a clear reason and claims nothing; the per-app limits (settlements per minute, largest amount).
 */
describe('x402 settle across replicas, out of gas, limits (ganache)', () => {
  let chain: LocalChain;
  let x402: X402Chain;
  const env = (relayerKey: `0x${string}`, extra: Record<string, string> = {}) => ({
    CHAIN_RPC_URL: chain.url,
    CHAIN_TOKENS: JSON.stringify({ worldchain: { USDC: { address: x402.token, decimals: 6 } } }),
    CHAIN_FINALITY: '1',
    KEY_ENCRYPTION_KEY,
    X402_RELAYER_KEY: encrypt(KEY_ENCRYPTION_KEY, relayerKey),
    ...extra,
  });

  beforeAll(async () => {
    chain = await localChain();
    x402 = await deployX402Token(chain);
  }, 120000);
  afterAll(async () => {
    await chain?.close();
  });

  const settle = (h: TransactionsHarness, key: string, payload: PaymentPayload, requirements: PaymentRequirements) =>
    request(h.publicApp)
      .post('/x402/settle')
      .set('Authorization', `Bearer ${key}`)
      .send({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });

  const seat = async (h: TransactionsHarness) => {
    const appId = newAppId();
    const key = (await apiKeyFor(h, appId)).api_key;
    const seller = newAccount().address;
    await new ReceivingAddressService(h.storage.db, signatureVerifier({})).addByOperator(
      appId,
      'worldchain',
      seller,
      operator,
    );
    return { appId, key, seller };
  };

  describe('two replicas', () => {
    let replicas: Replicas<TransactionsHarness>;
    const relayerKey = generatePrivateKey();
    beforeAll(async () => {
      await x402.fund(privateKeyToAccount(relayerKey).address, ETH);
      replicas = await replicaPair('transactions', (shared) => transactionsHarness(env(relayerKey), shared));
    }, 120000);
    afterAll(async () => {
      await replicas?.close();
    });

    it('a settle racing itself on both replicas submits one transaction; both answer it', async () => {
      const { a, b } = replicas;
      const { key, seller } = await seat(a);
      const buyer = newAccount();
      await x402.mint(buyer.address, 4_000_000n);
      const asks = requirementsFor(x402.token, seller, 1_500_000n);
      const payment = await signedPayment(buyer, asks);
      const relayer = privateKeyToAccount(relayerKey).address;
      const sentBefore = await x402.sent(relayer);
      const [fromA, fromB, again] = await Promise.all([
        settle(a, key, payment, asks),
        settle(b, key, payment, asks),
        settle(b, key, payment, asks),
      ]);
      expect(fromA.status).toBe(200);
      expect(fromA.body).toMatchObject({ success: true, payer: buyer.address });
      expect(fromB.body).toEqual(fromA.body);
      expect(again.body).toEqual(fromA.body);
      expect(await x402.sent(relayer)).toBe(sentBefore + 1);
      expect(await x402.balanceOf(seller)).toBe(1_500_000n);
      expect(await x402.balanceOf(buyer.address)).toBe(2_500_000n);
      const rows = await a.storage.db.query<{ n: string }>(
        'SELECT count(*)::text AS n FROM transactions WHERE transaction_hash = $1',
        [fromA.body.transaction],
      );
      expect(rows[0].n).toBe('1');
    });

    it('takes over a claim whose replica stopped before sending anything (its lease over), and settles it once', async () => {
      const { a, b } = replicas;
      const { appId, key, seller } = await seat(a);
      const buyer = newAccount();
      await x402.mint(buyer.address, 1_000_000n);
      const asks = requirementsFor(x402.token, seller, 1_000_000n);
      const payment = await signedPayment(buyer, asks);
      const authorization = (payment.payload as { authorization: Authorization }).authorization;
      const claimKey = authorizationKey('eip155:1337', x402.token, authorization);
      // replica a claimed it and stopped: no transaction hash, the lease already over
      const store = settlementStore(a.storage.db);
      expect(
        await store.claim(claimKey, { appId, payTo: seller.toLowerCase(), value: '1000000', leaseMs: -1000 }),
      ).toBe(1);
      const relayer = privateKeyToAccount(relayerKey).address;
      const sentBefore = await x402.sent(relayer);
      const res = await settle(b, key, payment, asks);
      expect(res.body).toMatchObject({ success: true, payer: buyer.address });
      expect(await x402.sent(relayer)).toBe(sentBefore + 1);
      expect(await x402.balanceOf(seller)).toBe(1_000_000n);
      expect((await store.find(claimKey))?.outcome).toEqual(res.body);
      // taken over: the claim carries the next fencing token
      expect((await store.find(claimKey))?.fence).toBe(2);
    });
  });

  /**
   * A review finding: a settle waiting for the relayer's lock longer than its claim's lease lost the claim to
   * another settle, and both submitted (the second transaction reverted, costing gas). Only on Postgres: the
   * embedded database is one connection, which the settle holding the relayer's lock holds, so no other
   * settle can even read the claim meanwhile.
   */
  (process.env.TEST_DATABASE_URL ? describe : describe.skip)('a settle stalled under the relayer’s lock', () => {
    let replicas: Replicas<TransactionsHarness>;
    let proxy: HoldingRpc;
    const relayerKey = generatePrivateKey();
    const relayer = privateKeyToAccount(relayerKey).address;
    beforeAll(async () => {
      await x402.fund(relayer, ETH);
      proxy = await holdingRpc(chain.url);
      // replica a reaches the chain through the proxy (which can stall it inside the relayer's lock), b directly
      replicas = await replicaPair('transactions', (shared, which) =>
        transactionsHarness(which === 'a' ? { ...env(relayerKey), CHAIN_RPC_URL: proxy.url } : env(relayerKey), shared),
      );
    }, 120000);
    afterAll(async () => {
      await replicas?.close();
      await proxy?.close();
    });

    it('whose claim was taken over meanwhile sends nothing: one transaction, both settles answer it', async () => {
      const { a, b } = replicas;
      const { key, seller } = await seat(a);
      const buyer = newAccount();
      await x402.mint(buyer.address, 2_000_000n);
      const asks = requirementsFor(x402.token, seller, 1_000_000n);
      const payment = await signedPayment(buyer, asks);
      const claimKey = authorizationKey(
        'eip155:1337',
        x402.token,
        (payment.payload as { authorization: Authorization }).authorization,
      );
      const store = settlementStore(a.storage.db);
      const sentBefore = await x402.sent(relayer);

      // a claims, takes the relayer's lock and stalls there (its read of the relayer's nonce held)
      const held = proxy.holdNext('eth_getTransactionCount', relayer);
      // (supertest sends when its answer is asked for)
      const fromA = settle(a, key, payment, asks).then((res) => res);
      await held;
      expect(await store.find(claimKey)).toMatchObject({ fence: 1, transactionHash: null });
      // … for longer than its lease
      await a.storage.db.query(
        `UPDATE x402_settlements SET lease_until = now() - interval '1 minute' WHERE nonce = $1`,
        [claimKey.nonce],
      );
      // b takes the claim over and waits for the lock
      const fromB = settle(b, key, payment, asks).then((res) => res);
      while ((await store.find(claimKey))?.fence !== 2) await new Promise((resolve) => setTimeout(resolve, 20));

      proxy.release();
      const [resA, resB] = await Promise.all([fromA, fromB]);
      expect(resB.body).toEqual({
        success: true,
        payer: buyer.address,
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        network: 'eip155:1337',
        amount: '1000000',
        extra: { transaction_id: expect.any(String) },
      });
      expect(resA.body).toEqual(resB.body);
      // one transaction: a's, fenced out, was never broadcast
      expect(await x402.sent(relayer)).toBe(sentBefore + 1);
      expect(await x402.balanceOf(seller)).toBe(1_000_000n);
      expect(await store.find(claimKey)).toMatchObject({
        fence: 2,
        transactionHash: resB.body.transaction,
        outcome: resB.body,
      });
      const rows = await a.storage.db.query<{ n: string }>(
        'SELECT count(*)::text AS n FROM transactions WHERE transaction_hash = $1',
        [resB.body.transaction],
      );
      expect(rows[0].n).toBe('1');
    });
  });

  describe('one replica whose relayer has no gas, 1 settlement per minute, at most 3 USDC', () => {
    let h: TransactionsHarness;
    const relayerKey = generatePrivateKey();
    beforeAll(async () => {
      h = await transactionsHarness(env(relayerKey, { X402_SETTLEMENTS_PER_MINUTE: '1', X402_MAX_AMOUNT: '3000000' }));
    }, 120000);
    afterAll(async () => {
      await h?.close();
    });

    it('refuses to settle while the relayer cannot pay for gas, claiming nothing; settles once it can', async () => {
      const { key, seller } = await seat(h);
      const buyer = newAccount();
      await x402.mint(buyer.address, 2_000_000n);
      const asks = requirementsFor(x402.token, seller, 1_000_000n);
      const payment = await signedPayment(buyer, asks);
      const refused = await settle(h, key, payment, asks);
      expect(refused.status).toBe(200);
      expect(refused.body).toEqual({
        success: false,
        errorReason: 'relayer_insufficient_gas',
        errorMessage: expect.stringContaining('nothing was submitted'),
        transaction: '',
        network: 'eip155:1337',
        payer: buyer.address,
      });
      expect(await h.storage.db.query('SELECT * FROM x402_settlements')).toEqual([]);
      expect(await x402.balanceOf(buyer.address)).toBe(2_000_000n);
      const metrics = (await request(h.adminApp).get('/metrics').expect(200)).text;
      expect(metrics).toContain(
        `x402_relayer_balance_wei{relayer="${privateKeyToAccount(relayerKey).address}",service="transactions"} 0\n`,
      );

      // the same authorization, once the operator tops the relayer up
      await x402.fund(privateKeyToAccount(relayerKey).address, ETH);
      const settled = await settle(h, key, payment, asks);
      expect(settled.body).toMatchObject({ success: true, payer: buyer.address });
      expect(await x402.balanceOf(seller)).toBe(1_000_000n);

      // a second settlement within the minute is over X402_SETTLEMENTS_PER_MINUTE
      const next = await signedPayment(buyer, asks);
      const limited = await settle(h, key, next, asks);
      expect(limited.body).toMatchObject({ success: false, errorReason: 'settlement_rate_limited', transaction: '' });
      expect(await x402.balanceOf(seller)).toBe(1_000_000n);
    });

    it('refuses in verify an amount over X402_MAX_AMOUNT', async () => {
      const { key, seller } = await seat(h);
      const buyer = newAccount();
      await x402.mint(buyer.address, 5_000_000n);
      const asks = requirementsFor(x402.token, seller, 4_000_000n);
      const res = await request(h.publicApp)
        .post('/x402/verify')
        .set('Authorization', `Bearer ${key}`)
        .send({ x402Version: 2, paymentPayload: await signedPayment(buyer, asks), paymentRequirements: asks });
      expect(res.body).toMatchObject({ isValid: false, invalidReason: 'amount_over_limit', payer: buyer.address });
    });

    it('refuses a payment of nothing, or under X402_MIN_AMOUNT (1000: 0.001), in verify and settle: the relayer pays no gas for it', async () => {
      const { key, seller } = await seat(h);
      const buyer = newAccount(); // an empty wallet: a zero-value authorization needs no balance
      for (const amount of [0n, 999n]) {
        const asks = requirementsFor(x402.token, seller, amount);
        const payment = await signedPayment(buyer, asks);
        const verified = await request(h.publicApp)
          .post('/x402/verify')
          .set('Authorization', `Bearer ${key}`)
          .send({ x402Version: 2, paymentPayload: payment, paymentRequirements: asks });
        expect(verified.body).toMatchObject({
          isValid: false,
          invalidReason: 'amount_under_limit',
          invalidMessage: expect.stringContaining('X402_MIN_AMOUNT'),
          payer: buyer.address,
        });
        const settled = await settle(h, key, payment, asks);
        expect(settled.body).toMatchObject({ success: false, errorReason: 'amount_under_limit', transaction: '' });
      }
      expect(
        await h.storage.db.query('SELECT * FROM x402_settlements WHERE lower(payer) = lower($1)', [buyer.address]),
      ).toEqual([]);
    });
  });
});

interface HoldingRpc {
  url: string;
  /** Holds the next request that calls `method` about `address` until release(); resolves once it arrived. */
  holdNext(method: string, address: string): Promise<void>;
  release(): void;
  close(): Promise<void>;
}

/** A JSON-RPC proxy to `target` that can hold one request (a batch held whole). */
async function holdingRpc(target: string): Promise<HoldingRpc> {
  let armed: { method: string; address: string; arrived: () => void } | null = null;
  let gate: Promise<void> = Promise.resolve();
  let open: () => void = () => undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const calls = ([] as { method: string; params?: unknown[] }[]).concat(JSON.parse(body));
      const hold =
        armed &&
        calls.some(
          (c) =>
            c.method === armed!.method &&
            JSON.stringify(c.params ?? [])
              .toLowerCase()
              .includes(armed!.address),
        );
      const wait = hold ? gate : Promise.resolve();
      if (hold) {
        armed!.arrived();
        armed = null;
      }
      void wait
        .then(() => fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body }))
        .then(async (answer) => {
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holdNext(method, address) {
      gate = new Promise<void>((resolve) => (open = resolve));
      return new Promise<void>((arrived) => (armed = { method, address: address.toLowerCase(), arrived }));
    },
    release: () => open(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
