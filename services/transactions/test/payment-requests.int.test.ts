import ganache from 'ganache';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { createWalletClient, http as viemHttp, type Hash, type PublicClient } from 'viem';
import { randomHex, testBus, testLogger } from '@attest/testing';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { ChainWatcher } from '../src/chain/chain-watcher';
import { ChainMetrics } from '../src/chain/chain-metrics';
import { chainClient, rpcPool } from '../src/chain/start-watcher';
import { PaymentRequestService } from '../src/payment-requests/payment-request-service';
import { WEBHOOK_PAYLOAD_VERSION } from '../src/kernel/events';
import { HttpPriceSource } from '../src/payment-requests/price-quote';
import { TransactionService } from '../src/transactions/transaction-service';
import { transactionStore } from '../src/transactions/transaction-store';
import { TEST_TOKEN_ABI, TEST_TOKEN_BYTECODE } from './fixtures/test-token';
import {
  apiKeyFor,
  newAppId,
  postTransaction,
  receiveAt,
  transactionsHarness,
  type TransactionsHarness,
} from './support';
import { PriceStub } from './support/price-stub';
import { WebhookReceiver } from './support/webhook-receiver';

type Address = `0x${string}`;

interface View {
  id: string;
  status: string;
  token: string | null;
  accepted_tokens: {
    token: string;
    amount_due: string;
    price: { rate: { amount: string; decimals: number }; observed_at: string; source: string } | null;
  }[];
  reason: string | null;
  reason_detail: string | null;
  amount_due: string | null;
  amount_paid: string;
  amount_remaining: string | null;
  amount_over: string;
  price: { amount: string; currency: string; observed_at: string | null; source: string | null } | null;
  payments: {
    transaction_id: string;
    status: string;
    reason: string | null;
    amount_received: string | null;
    block_number: string | null;
    confirmations: number | null;
    late: boolean;
  }[];
}

describe('payment requests paid on a local chain (ganache)', () => {
  let h: TransactionsHarness;
  let server: ReturnType<typeof ganache.server>;
  let client: PublicClient;
  let rpcUrl: string;
  let wallet: ReturnType<typeof createWalletClient>;
  let accounts: Address[];
  let usdce: Address;
  let merchant: Address;
  const prices = new PriceStub();
  /** Every token at one price, as a test sets it. */
  const priceEveryToken = (price: { amount: string; decimals: number }) =>
    (prices.prices = { WLD: price, USDCE: price });
  priceEveryToken({ amount: '250', decimals: 2 });
  let pricesUrl: string;
  let env: Record<string, string>;
  const busPrefix = `test:transactions:${randomHex(5)}:`;
  const appId = newAppId();
  let apiKey: string;

  const rpc = (method: string) => client.request({ method: method as 'eth_blockNumber', params: [] as never });
  const pay = (value: bigint, to: Address = merchant) =>
    wallet.writeContract({
      address: usdce,
      abi: TEST_TOKEN_ABI,
      functionName: 'transfer',
      args: [to, value],
      account: accounts[0],
      chain: null,
      gas: 100000n,
    });

  beforeAll(async () => {
    const port = await freePort();
    const options = {
      logging: { quiet: true },
      wallet: { deterministic: true, totalAccounts: 4 },
      chain: { chainId: 1337 },
    };
    server = ganache.server(options as unknown as Parameters<typeof ganache.server>[0]);
    await server.listen(port, '127.0.0.1');
    rpcUrl = `http://127.0.0.1:${port}`;
    client = chainClient(rpcUrl);
    wallet = createWalletClient({ transport: viemHttp(rpcUrl) });
    accounts = await wallet.getAddresses();
    merchant = accounts[1].toLowerCase() as Address;
    const deployed = await wallet.deployContract({
      abi: TEST_TOKEN_ABI,
      bytecode: TEST_TOKEN_BYTECODE,
      args: [6],
      account: accounts[0],
      chain: null,
      gas: 1000000n,
    });
    usdce = (await client.getTransactionReceipt({ hash: deployed })).contractAddress!;
    await wallet.writeContract({
      address: usdce,
      abi: TEST_TOKEN_ABI,
      functionName: 'mint',
      args: [accounts[0], 10n ** 30n],
      account: accounts[0],
      chain: null,
      gas: 100000n,
    });
    pricesUrl = await prices.listen();
    env = {
      CHAIN_TOKENS: JSON.stringify({ worldchain: { USDCE: { address: usdce, decimals: 6 }, WLD: { native: true } } }),
      PRICES_URL: pricesUrl,
      PAYMENT_PRICE_MAX_AGE_SECONDS: '300',
      PAYMENT_REQUEST_SWEEP_INTERVAL_MS: '3600000',
      KEY_ENCRYPTION_KEY: 'webhook-test-key-encryption-key-0123456789',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
    };
    h = await transactionsHarness(env, { bus: testBus('transactions', busPrefix) });
    apiKey = (await apiKeyFor(h, appId)).api_key;
    await receiveAt(h, appId, merchant);
  }, 60000);
  afterAll(async () => {
    await h.close();
    await h.storage.bus.close();
    await server.close();
    prices.server.close();
  });

  /** The chain watcher, with payment requests settled as the service does. */
  const watcher = (finality = 1) =>
    new ChainWatcher(
      rpcPool([rpcUrl], { chain: 'worldchain', quorum: 1 }, new ChainMetrics(), testLogger),
      transactionStore(h.storage.db),
      new TransactionService(h.storage.db, h.storage.bus, {
        settlement: new PaymentRequestService(
          h.storage.db,
          new HttpPriceSource(pricesUrl, { maxAgeMs: 300000 }),
          h.storage.bus,
        ),
      }),
      { chain: 'worldchain', tokens: h.config.CHAIN_TOKENS.worldchain, finality, dropTimeoutMs: 60000, intervalMs: 50 },
      testLogger,
    );

  const api = (method: 'get' | 'post', path: string) =>
    request(h.publicApp)[method](path).set('Authorization', `Bearer ${apiKey}`);

  let orders = 0;
  async function create(fields: Record<string, unknown> = {}): Promise<View> {
    const res = await api('post', '/api/v2/client/payment-requests').send({
      reference: `order-${++orders}-${Math.random().toString(36).slice(2)}`,
      chain: 'worldchain',
      token: 'USDCE',
      to: merchant,
      token_amount: '1000000',
      ...fields,
    });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('pending');
    return res.body;
  }

  let payments = 0;
  async function recordPayment(requestId: string, hash: Hash, amount = '1000000') {
    return postTransaction(h, apiKey, {
      app_id: appId,
      type: 'pay',
      reference: `payment-${++payments}`,
      transaction_hash: hash,
      chain: 'worldchain',
      token: 'USDCE',
      to: merchant,
      from: accounts[0],
      token_amount: amount,
      payment_request_id: requestId,
    });
  }

  const read = async (id: string): Promise<View> => {
    const res = await api('get', `/api/v2/client/payment-requests/${id}`);
    expect(res.status).toBe(200);
    return res.body;
  };

  /** The payment_request.* events in the outbox (their bodies are what is signed and delivered). */
  const events = async (id: string) =>
    (
      await h.storage.db.query<{ type: string; body: string; transaction_id: string | null }>(
        'SELECT type, body, transaction_id FROM webhook_events WHERE payment_request_id = $1 ORDER BY created_at, id',
        [id],
      )
    ).map((e) => ({
      type: e.type,
      transactionId: e.transaction_id,
      ...(JSON.parse(e.body) as { version: string; data: View }),
    }));

  async function paidOnce(requestId: string, value: bigint) {
    const hash = await pay(value);
    const res = await recordPayment(requestId, hash, value.toString());
    expect(res.status).toBe(201);
    await watcher().tick();
    return hash;
  }

  it('another app cannot claim this app’s customer’s payment: refused, this app’s record succeeds, its request is paid (issue 40, item 1)', async () => {
    const attacker = newAppId();
    const attackerKey = (await apiKeyFor(h, attacker)).api_key;
    const r = await create({ token_amount: '2500000' });
    const hash = await pay(2500000n);
    const claim = {
      app_id: attacker,
      type: 'pay',
      reference: 'not-mine',
      transaction_hash: hash,
      chain: 'worldchain',
      token: 'USDCE',
      to: merchant,
      from: accounts[0],
      token_amount: '2500000',
    };
    // the attacker records first: refused, nothing stored, the transaction is not held
    const refused = await postTransaction(h, attackerKey, claim);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      code: 'receiving_address_not_registered',
      detail: expect.stringContaining(`to (${merchant}) is not one of this app's receiving addresses on worldchain`),
      attribute: 'to',
    });
    expect(
      await h.storage.db.query('SELECT id FROM transactions WHERE transaction_hash = $1', [hash.toLowerCase()]),
    ).toEqual([]);
    // nor can it ask to be paid at the address, or take the address: one app receives at an address
    const ask = await request(h.publicApp)
      .post('/api/v2/client/payment-requests')
      .set('Authorization', `Bearer ${attackerKey}`)
      .send({ reference: 'not-mine', chain: 'worldchain', token: 'USDCE', to: merchant, token_amount: '2500000' });
    expect(ask.status).toBe(403);
    expect(ask.body).toMatchObject({ code: 'receiving_address_not_registered', attribute: 'to' });
    const take = await request(h.publicApp)
      .post('/api/v2/client/receiving-addresses/challenges')
      .set('Authorization', `Bearer ${attackerKey}`)
      .send({ chain: 'worldchain', address: merchant });
    expect(take.status).toBe(409);
    expect(take.body).toMatchObject({ code: 'receiving_address_taken', attribute: 'address' });
    // the merchant's own record succeeds, and its request is paid
    const mine = await recordPayment(r.id, hash, '2500000');
    expect(mine.status).toBe(201);
    await watcher().tick();
    expect(await read(r.id)).toMatchObject({
      status: 'paid',
      amount_paid: '2500000',
      payments: [expect.objectContaining({ transaction_hash: hash.toLowerCase(), status: 'mined' })],
    });
    // the attacker's record after it is refused the same way (not 409: it never learns who holds it)
    expect((await postTransaction(h, attackerKey, claim)).status).toBe(403);
  });

  it('priced in USD: the token amount is fixed from a fresh price, kept with its observed_at and source', async () => {
    const observed = new Date(Date.now() - 10000);
    prices.observedAt = () => observed;
    priceEveryToken({ amount: '250', decimals: 2 }); // 2.50 USD per WLD
    const body = {
      reference: 'usd-order-1',
      chain: 'worldchain',
      token: 'WLD',
      to: merchant,
      amount: '10.00',
      currency: 'usd',
      metadata: { cart: [1, 2] },
    };
    const res = await api('post', '/api/v2/client/payment-requests').send(body);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'pending',
      token: 'WLD',
      amount_due: '4000000',
      amount_paid: '0',
      price: {
        amount: '10.00',
        currency: 'USD',
        rate: { amount: '250', decimals: 2 },
        observed_at: observed.toISOString(),
        source: pricesUrl,
      },
      metadata: { cart: [1, 2] },
    });
    expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)).toBe(900000);
    // the same body again: the same request, not repriced; a different one: 409 naming the field
    priceEveryToken({ amount: '500', decimals: 2 });
    const again = await api('post', '/api/v2/client/payment-requests').send(body);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: res.body.id, amount_due: '4000000' });
    const other = await api('post', '/api/v2/client/payment-requests').send({ ...body, amount: '11.00' });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'reference_taken', attribute: 'amount' });
    expect((await events(res.body.id)).map((e) => [e.type, e.version, e.data.amount_due])).toEqual([
      ['payment_request.created', WEBHOOK_PAYLOAD_VERSION, '4000000'],
    ]);
  });

  it('a stale or unavailable price refuses the request with 503 and the reason, never an old rate', async () => {
    prices.observedAt = () => new Date(Date.now() - 3600000);
    const stale = await api('post', '/api/v2/client/payment-requests').send({
      reference: 'usd-stale',
      chain: 'worldchain',
      token: 'WLD',
      to: merchant,
      amount: '5',
      currency: 'USD',
    });
    expect(stale.status).toBe(503);
    expect(stale.body).toMatchObject({ code: 'price_unavailable', attribute: 'currency' });
    expect(stale.body.detail).toMatch(/observed at .* more than 300 s ago/);
    prices.observedAt = () => new Date();
    prices.status = 503;
    const down = await api('post', '/api/v2/client/payment-requests').send({
      reference: 'usd-stale',
      chain: 'worldchain',
      token: 'WLD',
      to: merchant,
      amount: '5',
      currency: 'USD',
    });
    prices.status = 200;
    expect(down.status).toBe(503);
    expect(down.body.detail).toContain('No fresh price for WLD/USD');
    const [{ n }] = await h.storage.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM payment_requests WHERE reference = 'usd-stale'",
    );
    expect(Number(n)).toBe(0);
  });

  it('bad input names the field', async () => {
    const post = (body: Record<string, unknown>) => api('post', '/api/v2/client/payment-requests').send(body);
    const base = { reference: 'bad', chain: 'worldchain', token: 'USDCE', to: merchant };
    expect((await post(base)).body).toMatchObject({ code: 'required', attribute: 'amount' });
    expect((await post({ ...base, amount: '1' })).body).toMatchObject({ code: 'required', attribute: 'currency' });
    expect((await post({ ...base, token_amount: '1', amount: '1', currency: 'USD' })).body).toMatchObject({
      attribute: 'token_amount',
    });
    expect((await post({ ...base, token_amount: '1', expires_in: 30 })).body).toMatchObject({
      attribute: 'expires_in',
    });
    expect((await post({ ...base, token_amount: '1', expires_in: 86401 })).body).toMatchObject({
      attribute: 'expires_in',
    });
    expect((await post({ ...base, token_amount: '1', metadata: { x: 'y'.repeat(5000) } })).body).toMatchObject({
      attribute: 'metadata',
    });
    expect((await post({ ...base, token: 'DOGE', token_amount: '1' })).body).toMatchObject({ attribute: 'token' });
  });

  it('paid exactly: detected while its block is not final, then paid with amounts, block and confirmations', async () => {
    const r = await create({ token_amount: '2500000' });
    const hash = await pay(2500000n);
    const wrongTo = await postTransaction(h, apiKey, {
      app_id: appId,
      type: 'pay',
      reference: 'payment-wrong-to',
      transaction_hash: hash,
      chain: 'worldchain',
      token: 'USDCE',
      to: accounts[2],
      from: accounts[0],
      token_amount: '2500000',
      payment_request_id: r.id,
    });
    expect(wrongTo.status).toBe(400);
    expect(wrongTo.body).toMatchObject({ code: 'invalid_parameter', attribute: 'to' });
    expect((await recordPayment(`pr_${'0'.repeat(32)}`, hash)).status).toBe(404);
    expect((await recordPayment(r.id, hash, '2500000')).status).toBe(201);
    const w = watcher(2);
    await w.tick();
    const detected = await read(r.id);
    expect(detected).toMatchObject({ status: 'detected', reason: 'in_block', amount_paid: '0' });
    expect(detected.payments).toHaveLength(1);
    expect(detected.payments[0]).toMatchObject({ status: 'pending', confirmations: 1 });
    await rpc('evm_mine');
    await w.tick();
    const { blockNumber } = await client.getTransactionReceipt({ hash });
    const paid = await read(r.id);
    expect(paid).toMatchObject({
      status: 'paid',
      reason: null,
      amount_due: '2500000',
      amount_paid: '2500000',
      amount_remaining: '0',
    });
    expect(paid.payments[0]).toMatchObject({
      status: 'mined',
      amount_received: '2500000',
      block_number: String(blockNumber),
      confirmations: 2,
      late: false,
    });
    const sent = await events(r.id);
    expect(sent.map((e) => [e.type, e.transactionId, e.version, e.data.status, e.data.amount_paid])).toEqual([
      ['payment_request.created', null, WEBHOOK_PAYLOAD_VERSION, 'pending', '0'],
      ['payment_request.detected', null, WEBHOOK_PAYLOAD_VERSION, 'detected', '0'],
      ['payment_request.paid', null, WEBHOOK_PAYLOAD_VERSION, 'paid', '2500000'],
    ]);
  });

  it('underpaid within the app’s tolerance is paid (with the reason); beyond it, underpaid with the amounts', async () => {
    const policy = await h.admin('put', `/apps/${appId}/payment-policy`).send({ underpayment_tolerance_percent: 2 });
    expect(policy.status).toBe(200);
    // default_expires_in, display_name and return_origins joined the policy in issue 44 (items 5 and 6)
    expect(policy.body).toEqual({
      app_id: appId,
      underpayment_tolerance_percent: '2',
      flag_overpayment: true,
      default_expires_in: 900,
      display_name: null,
      return_origins: [],
    });
    const within = await create();
    const beyond = await create();
    await paidOnce(within.id, 985000n);
    await paidOnce(beyond.id, 950000n);
    expect(await read(within.id)).toMatchObject({
      status: 'paid',
      reason: 'underpaid_within_tolerance',
      amount_paid: '985000',
      amount_remaining: '15000',
    });
    const under = await read(beyond.id);
    expect(under).toMatchObject({
      status: 'underpaid',
      reason: 'underpaid',
      amount_paid: '950000',
      amount_remaining: '50000',
    });
    expect(under.reason_detail).toBe(
      'Received 0.95 of 1 USDCE (0.05 short); the underpayment tolerance of 2 % needs at least 0.98.',
    );
    const [last] = (await events(beyond.id)).slice(-1);
    expect(last).toMatchObject({
      type: 'payment_request.underpaid',
      data: { reason: 'underpaid', amount_paid: '950000', amount_due: '1000000' },
    });
    expect(
      (await h.admin('put', `/apps/${appId}/payment-policy`).send({ underpayment_tolerance_percent: 0 })).status,
    ).toBe(200);
  });

  it('overpaid: paid_over, flagged with the amount over', async () => {
    const r = await create();
    await paidOnce(r.id, 1200000n);
    expect(await read(r.id)).toMatchObject({
      status: 'paid_over',
      reason: 'overpaid',
      amount_paid: '1200000',
      amount_over: '200000',
    });
    expect((await events(r.id)).at(-1)).toMatchObject({
      type: 'payment_request.paid_over',
      data: { amount_over: '200000' },
    });
  });

  it('two transfers count toward one request: underpaid after the first, paid after the second', async () => {
    const r = await create();
    await paidOnce(r.id, 600000n);
    expect(await read(r.id)).toMatchObject({ status: 'underpaid', amount_paid: '600000' });
    await paidOnce(r.id, 400000n);
    const paid = await read(r.id);
    expect(paid).toMatchObject({ status: 'paid', amount_paid: '1000000' });
    expect(paid.payments.map((p) => p.amount_received)).toEqual(['600000', '400000']);
    expect((await events(r.id)).map((e) => e.type)).toEqual([
      'payment_request.created',
      'payment_request.underpaid',
      'payment_request.paid',
    ]);
  });

  /** Time passes: the request's expiry is moved into the past (a write behind the service, so its read cache is told). */
  const pastExpiry = async (id: string) => {
    await h.storage.db.query("UPDATE payment_requests SET expires_at = now() - interval '1 minute' WHERE id = $1", [
      id,
    ]);
    await h.storage.bus.publish('cache:payment-requests', id);
  };

  it('never paid: the sweep expires it, with its event', async () => {
    const r = await create();
    await pastExpiry(r.id);
    const service = new PaymentRequestService(
      h.storage.db,
      new HttpPriceSource(pricesUrl, { maxAgeMs: 300000 }),
      h.storage.bus,
    );
    while (await service.expireDue(100));
    const stored = await h.storage.db.query<{ status: string }>('SELECT status FROM payment_requests WHERE id = $1', [
      r.id,
    ]);
    expect(stored[0].status).toBe('expired');
    expect(await read(r.id)).toMatchObject({ status: 'expired', reason: 'expired', amount_paid: '0' });
    expect((await events(r.id)).map((e) => e.type)).toEqual(['payment_request.created', 'payment_request.expired']);
  });

  it('paid after expiry: expired when read, then paid_late (never lost)', async () => {
    const r = await create();
    await pastExpiry(r.id);
    expect(await read(r.id)).toMatchObject({ status: 'expired' });
    await paidOnce(r.id, 1000000n);
    const late = await read(r.id);
    expect(late).toMatchObject({ status: 'paid_late', reason: 'paid_after_expiry', amount_paid: '1000000' });
    expect(late.payments[0].late).toBe(true);
    expect((await events(r.id)).map((e) => e.type)).toEqual([
      'payment_request.created',
      'payment_request.expired',
      'payment_request.paid_late',
    ]);
  });

  it('one transfer never satisfies two requests', async () => {
    const a = await create();
    const b = await create();
    const hash = await pay(1000000n);
    expect((await recordPayment(a.id, hash)).status).toBe(201);
    const second = await recordPayment(b.id, hash);
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ code: 'transaction_already_claimed', attribute: 'transaction_hash' });
    await watcher().tick();
    expect(await read(a.id)).toMatchObject({ status: 'paid', amount_paid: '1000000' });
    expect(await read(b.id)).toMatchObject({ status: 'pending', amount_paid: '0', payments: [] });
    const claims = await h.storage.db.query('SELECT 1 FROM transfer_claims WHERE transaction_hash = $1', [hash]);
    expect(claims).toHaveLength(1);
  });

  it('a failed payment fails the request with its reason', async () => {
    const r = await create();
    // the transfer goes elsewhere: nothing reaches the request's address
    const hash = await pay(1000000n, accounts[3].toLowerCase() as Address);
    expect((await recordPayment(r.id, hash)).status).toBe(201);
    await watcher().tick();
    expect(await read(r.id)).toMatchObject({ status: 'failed', reason: 'wrong_recipient', amount_paid: '0' });
    expect((await events(r.id)).at(-1)).toMatchObject({
      type: 'payment_request.failed',
      data: { reason: 'wrong_recipient' },
    });
  });

  it('a cached read shows each change at once: the payment recorded, detected, paid; on another replica too', async () => {
    // another replica: the same database; with Redis, its own connection on the same channels
    const otherBus = process.env.TEST_REDIS_URL ? testBus('transactions', busPrefix) : undefined;
    const b = await transactionsHarness(env, { db: h.storage.db, bus: otherBus ?? h.storage.bus });
    try {
      const readOn = async (harness: TransactionsHarness, id: string): Promise<View> => {
        const res = await request(harness.publicApp)
          .get(`/api/v2/client/payment-requests/${id}`)
          .set('Authorization', `Bearer ${apiKey}`);
        expect(res.status).toBe(200);
        return res.body;
      };
      /** The other replica learns of a change through the bus: at once in memory, a message later with Redis. */
      const onOther = async (id: string, done: (v: View) => boolean): Promise<View> => {
        // generous: on a loaded machine a Redis message can take a while; the loop ends when it arrives
        const deadline = Date.now() + 15000;
        let v = await readOn(b, id);
        while (!done(v) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          v = await readOn(b, id);
        }
        return v;
      };
      // the other replica's subscriptions go out once its Redis connection is ready
      for (let i = 0; otherBus && !otherBus.connected && i < 200; i++) await new Promise((r) => setTimeout(r, 25));
      const r = await create();
      // both replicas hold the pending request with no payment in memory
      for (const harness of [h, b])
        expect(await readOn(harness, r.id)).toMatchObject({ status: 'pending', payments: [] });
      const hash = await pay(1000000n);
      expect((await recordPayment(r.id, hash)).status).toBe(201);
      expect((await readOn(h, r.id)).payments).toHaveLength(1);
      expect((await onOther(r.id, (v) => v.payments.length === 1)).payments).toMatchObject([{ status: 'pending' }]);
      const w = watcher(2);
      await w.tick();
      const { blockNumber } = await client.getTransactionReceipt({ hash });
      expect(await readOn(h, r.id)).toMatchObject({
        status: 'detected',
        payments: [{ block_number: String(blockNumber), confirmations: 1 }],
      });
      expect(await onOther(r.id, (v) => v.status === 'detected')).toMatchObject({
        status: 'detected',
        payments: [{ block_number: String(blockNumber), confirmations: 1 }],
      });
      await rpc('evm_mine');
      await w.tick();
      const paid = { status: 'paid', amount_paid: '1000000', payments: [{ status: 'mined', confirmations: 2 }] };
      expect(await readOn(h, r.id)).toMatchObject(paid);
      expect(await onOther(r.id, (v) => v.status === 'paid')).toMatchObject(paid);
      // the stored state is what both answer
      const [row] = await h.storage.db.query<{ status: string }>('SELECT status FROM payment_requests WHERE id = $1', [
        r.id,
      ]);
      expect(row.status).toBe('paid');
    } finally {
      await b.close();
      await otherBus?.close();
    }
  });

  it('confirmations never run ahead of the chain head the watcher noted', async () => {
    const r = await create();
    const hash = await pay(1000000n);
    expect((await recordPayment(r.id, hash)).status).toBe(201);
    const w = watcher(3);
    await w.tick();
    expect((await read(r.id)).payments[0].confirmations).toBe(1);
    // the chain moves on, the watcher has not looked yet: the read does not guess
    await rpc('evm_mine');
    expect((await read(r.id)).payments[0].confirmations).toBe(1);
    await w.tick();
    expect((await read(r.id)).payments[0].confirmations).toBe(2);
  });

  it('delivers payment_request.* events to a live receiver, signed, with version, state, amounts and reason', async () => {
    const receiver = await new WebhookReceiver().start();
    try {
      const hook = await h.admin('post', `/apps/${appId}/webhooks`).send({ url: receiver.url });
      expect(hook.status).toBe(201);
      const r = await create();
      await paidOnce(r.id, 400000n);
      await paidOnce(r.id, 600000n);
      const ofRequest = (x: { body: string }) => (JSON.parse(x.body) as { data: { id?: string } }).data.id === r.id;
      const got = await receiver.waitFor(3, ofRequest);
      const verifier = new Webhook(hook.body.secret as string);
      // each one verifies with the endpoint's secret, and its body is what was signed
      const bodies = got.map(
        (x) => verifier.verify(x.body, x.headers) as { type: string; version: number; data: View },
      );
      expect(bodies.map((b) => JSON.stringify(b))).toEqual(got.map((x) => JSON.stringify(JSON.parse(x.body))));
      const byType = new Map(bodies.map((b) => [b.type, b]));
      expect([...byType.keys()].sort()).toEqual([
        'payment_request.created',
        'payment_request.paid',
        'payment_request.underpaid',
      ]);
      expect(byType.get('payment_request.created')).toMatchObject({
        version: WEBHOOK_PAYLOAD_VERSION,
        data: { id: r.id, status: 'pending', reason: null, amount_due: '1000000', amount_paid: '0', payments: [] },
      });
      expect(byType.get('payment_request.underpaid')).toMatchObject({
        version: WEBHOOK_PAYLOAD_VERSION,
        data: {
          id: r.id,
          status: 'underpaid',
          reason: 'underpaid',
          reason_detail: 'Received 0.4 of 1 USDCE (0.6 short); the underpayment tolerance of 0 % needs at least 1.',
          amount_due: '1000000',
          amount_paid: '400000',
          amount_remaining: '600000',
          payments: [{ status: 'mined', amount_received: '400000' }],
        },
      });
      expect(byType.get('payment_request.paid')).toMatchObject({
        version: WEBHOOK_PAYLOAD_VERSION,
        data: {
          id: r.id,
          status: 'paid',
          reason: null,
          amount_paid: '1000000',
          amount_remaining: '0',
          payments: [{ amount_received: '400000' }, { amount_received: '600000' }],
        },
      });
      // a body altered on the way does not verify
      const [first] = got;
      expect(first.body).toContain('"type":"payment_request.');
      expect(() =>
        verifier.verify(first.body.replace('"type":"payment_request.', '"type":"payment_request_'), first.headers),
      ).toThrow();
    } finally {
      await receiver.stop();
    }
  });

  describe('accepted tokens', () => {
    const prices2 = { USDCE: { amount: '100', decimals: 2 }, WLD: { amount: '250', decimals: 2 } };
    /** The stub answers each token at its own price. */
    beforeAll(() => {
      prices.prices = { ...prices2 };
    });
    afterEach(() => {
      prices.observedAt = () => new Date();
    });

    const twoTokens = (reference: string) => ({
      reference,
      chain: 'worldchain',
      accepted_tokens: ['usdce', 'WLD'],
      to: merchant,
      amount: '10',
      currency: 'USD',
    });

    it('priced in USD: each accepted token’s amount fixed at its own price, shown in the GET, the list and the event', async () => {
      const observed = { USDCE: new Date(Date.now() - 20000), WLD: new Date(Date.now() - 5000) };
      prices.observedAt = (token) => observed[token as keyof typeof observed] ?? new Date();
      const res = await api('post', '/api/v2/client/payment-requests').send(twoTokens('multi-1'));
      expect(res.status).toBe(201);
      const accepted = [
        {
          token: 'USDCE',
          amount_due: '10000000',
          price: {
            rate: { amount: '100', decimals: 2 },
            observed_at: observed.USDCE.toISOString(),
            source: pricesUrl,
          },
        },
        {
          token: 'WLD',
          amount_due: '4000000',
          price: { rate: { amount: '250', decimals: 2 }, observed_at: observed.WLD.toISOString(), source: pricesUrl },
        },
      ];
      expect(res.body).toMatchObject({
        status: 'pending',
        token: null,
        amount_due: null,
        amount_remaining: null,
        amount_paid: '0',
        accepted_tokens: accepted,
        price: { amount: '10', currency: 'USD', rate: null, observed_at: null, source: null },
      });
      expect(await read(res.body.id)).toMatchObject({ accepted_tokens: accepted, token: null });
      const listed = await api('get', '/api/v2/client/payment-requests').query({ reference: 'multi-1' });
      expect(listed.body.data).toEqual([expect.objectContaining({ id: res.body.id, accepted_tokens: accepted })]);
      expect((await events(res.body.id)).map((e) => [e.type, e.data.accepted_tokens, e.data.token])).toEqual([
        ['payment_request.created', accepted, null],
      ]);
      const stored = await h.storage.db.query<{ token: string; amount_due: string; price_observed_at: Date }>(
        'SELECT token, amount_due, price_observed_at FROM payment_request_tokens WHERE payment_request_id = $1 ORDER BY position',
        [res.body.id],
      );
      expect(stored.map((t) => [t.token, String(t.amount_due), t.price_observed_at.toISOString()])).toEqual([
        ['USDCE', '10000000', observed.USDCE.toISOString()],
        ['WLD', '4000000', observed.WLD.toISOString()],
      ]);
      // the same request again, its tokens in another order or as the one-token shorthand of another request
      const again = await api('post', '/api/v2/client/payment-requests').send({
        ...twoTokens('multi-1'),
        accepted_tokens: ['WLD', 'USDCE'],
      });
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(res.body.id);
      const fewer = await api('post', '/api/v2/client/payment-requests').send({
        ...twoTokens('multi-1'),
        accepted_tokens: ['WLD'],
      });
      expect(fewer.status).toBe(409);
      expect(fewer.body).toMatchObject({ code: 'reference_taken', attribute: 'accepted_tokens' });
    });

    it('one accepted token’s price not fresh refuses the request (503 naming that token), nothing stored', async () => {
      prices.observedAt = (token) => (token === 'WLD' ? new Date(Date.now() - 3600000) : new Date());
      const res = await api('post', '/api/v2/client/payment-requests').send(twoTokens('multi-stale'));
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'price_unavailable', attribute: 'currency' });
      expect(res.body.detail).toMatch(/^The WLD\/USD price was observed at .* more than 300 s ago/);
      const rows = await h.storage.db.query("SELECT 1 FROM payment_requests WHERE reference = 'multi-stale'");
      expect(rows).toHaveLength(0);
    });

    it('token is short for a one-token list; bad lists name the field', async () => {
      const short = await api('post', '/api/v2/client/payment-requests').send({
        reference: 'short-1',
        chain: 'worldchain',
        token: 'USDCE',
        to: merchant,
        token_amount: '1000000',
      });
      expect(short.status).toBe(201);
      expect(short.body).toMatchObject({
        token: 'USDCE',
        amount_due: '1000000',
        accepted_tokens: [{ token: 'USDCE', amount_due: '1000000', price: null }],
      });
      const same = await api('post', '/api/v2/client/payment-requests').send({
        reference: 'short-1',
        chain: 'worldchain',
        accepted_tokens: ['USDCE'],
        to: merchant,
        token_amount: '1000000',
      });
      expect(same.status).toBe(200);
      expect(same.body.id).toBe(short.body.id);
      const post = (body: Record<string, unknown>) => api('post', '/api/v2/client/payment-requests').send(body);
      const base = { reference: 'bad-list', chain: 'worldchain', to: merchant, amount: '1', currency: 'USD' };
      const refused = async (body: Record<string, unknown>, code: string, attribute: string, detail: RegExp) => {
        const res = await post(body);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code, attribute });
        expect(res.body.detail).toMatch(detail);
      };
      await refused(base, 'required', 'accepted_tokens', /required/);
      await refused(
        { ...base, token: 'USDCE', accepted_tokens: ['WLD'] },
        'invalid_parameter',
        'accepted_tokens',
        /not both/,
      );
      await refused({ ...base, accepted_tokens: [] }, 'invalid_parameter', 'accepted_tokens', /at least one/);
      await refused({ ...base, accepted_tokens: ['WLD', 'wld'] }, 'invalid_parameter', 'accepted_tokens.1', /once/);
      await refused({ ...base, accepted_tokens: 'WLD' }, 'invalid_parameter', 'accepted_tokens', /list/);
      await refused({ ...base, accepted_tokens: ['WLD', 'DOGE'] }, 'invalid_parameter', 'accepted_tokens', /"DOGE"/);
      await refused(
        {
          reference: 'bad-list',
          chain: 'worldchain',
          to: merchant,
          accepted_tokens: ['USDCE', 'WLD'],
          token_amount: '1',
        },
        'invalid_parameter',
        'accepted_tokens',
        /token_amount/,
      );
      const rows = await h.storage.db.query("SELECT 1 FROM payment_requests WHERE reference = 'bad-list'");
      expect(rows).toHaveLength(0);
    });

    const payIn = (requestId: string, token: string, transactionHash: Hash, amount: string, reference: string) =>
      postTransaction(h, apiKey, {
        app_id: appId,
        type: 'pay',
        reference,
        transaction_hash: transactionHash,
        chain: 'worldchain',
        token,
        to: merchant,
        from: accounts[0],
        token_amount: amount,
        payment_request_id: requestId,
      });

    it('settled in the token of its first payment: amounts in it; another accepted token is 409, one not accepted 400', async () => {
      const r = (await api('post', '/api/v2/client/payment-requests').send(twoTokens('multi-pay'))).body as View;
      const hash = await pay(10000000n);
      expect((await payIn(r.id, 'USDCE', hash, '10000000', 'multi-pay-1')).status).toBe(201);
      expect(await read(r.id)).toMatchObject({ token: 'USDCE', amount_due: '10000000', amount_remaining: '10000000' });
      const other = await payIn(r.id, 'WLD', `0x${'5'.repeat(64)}`, '4000000', 'multi-pay-2');
      expect(other.status).toBe(409);
      expect(other.body).toMatchObject({ code: 'payment_token_mismatch', attribute: 'token' });
      expect(other.body.detail).toBe(
        `Payment request ${r.id} is being paid in USDCE; every payment toward it must be in USDCE.`,
      );
      const onlyWld = (
        await api('post', '/api/v2/client/payment-requests').send({
          ...twoTokens('only-wld'),
          accepted_tokens: ['WLD'],
        })
      ).body as View;
      const notAccepted = await payIn(onlyWld.id, 'USDCE', `0x${'6'.repeat(64)}`, '10000000', 'multi-pay-3');
      expect(notAccepted.status).toBe(400);
      expect(notAccepted.body.detail).toBe(
        `token must be one of the payment request's accepted tokens (WLD) to pay payment request ${onlyWld.id}.`,
      );
      expect(notAccepted.body.attribute).toBe('token');
      await watcher().tick();
      const paid = await read(r.id);
      expect(paid).toMatchObject({
        status: 'paid',
        token: 'USDCE',
        amount_due: '10000000',
        amount_paid: '10000000',
        amount_remaining: '0',
        price: { amount: '10', currency: 'USD', rate: { amount: '100', decimals: 2 }, source: pricesUrl },
      });
      expect(paid.payments).toHaveLength(1);
      expect((await events(r.id)).at(-1)).toMatchObject({
        type: 'payment_request.paid',
        data: { token: 'USDCE', amount_due: '10000000', amount_paid: '10000000' },
      });
    });

    it('its only payment failed: open to any accepted token again, then paid in another (native WLD)', async () => {
      const r = (await api('post', '/api/v2/client/payment-requests').send(twoTokens('multi-retry'))).body as View;
      const wrong = await pay(10000000n, accounts[3].toLowerCase() as Address);
      expect((await payIn(r.id, 'USDCE', wrong, '10000000', 'multi-retry-1')).status).toBe(201);
      await watcher().tick();
      expect(await read(r.id)).toMatchObject({ status: 'failed', reason: 'wrong_recipient', token: null });
      const native = await wallet.sendTransaction({
        account: accounts[0],
        to: merchant,
        value: 4n * 10n ** 18n,
        chain: null,
      });
      expect((await payIn(r.id, 'WLD', native, '4000000', 'multi-retry-2')).status).toBe(201);
      await watcher().tick();
      const paid = await read(r.id);
      expect(paid).toMatchObject({ status: 'paid', token: 'WLD', amount_due: '4000000', amount_paid: '4000000' });
      expect(paid.payments.map((p) => p.status)).toEqual(['failed', 'mined']);
      const [row] = await h.storage.db.query<{ token: string; amount_due: string }>(
        'SELECT token, amount_due FROM payment_requests WHERE id = $1',
        [r.id],
      );
      expect([row.token, String(row.amount_due)]).toEqual(['WLD', '4000000']);
    });
  });

  it('lists requests and transactions by reference, status and since, paged with a cursor', async () => {
    const first = await create({ reference: 'list-1' });
    const second = await create({ reference: 'list-2' });
    const since = (first as unknown as { created_at: string }).created_at;
    const page1 = await api('get', '/api/v2/client/payment-requests').query({ since, status: 'pending', limit: 1 });
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((r: View) => r.id)).toEqual([first.id]);
    const page2 = await api('get', '/api/v2/client/payment-requests').query({
      since,
      status: 'pending',
      limit: 1,
      cursor: page1.body.next_cursor,
    });
    expect(page2.body.data.map((r: View) => r.id)).toEqual([second.id]);
    const byRef = await api('get', '/api/v2/client/payment-requests').query({ reference: 'list-2' });
    expect(byRef.body).toEqual({ data: [expect.objectContaining({ id: second.id })], next_cursor: null });
    const paid = await api('get', '/api/v2/client/payment-requests').query({ status: 'paid_over' });
    expect(paid.body.data.every((r: View) => r.status === 'paid_over')).toBe(true);
    expect(paid.body.data.length).toBeGreaterThan(0);
    expect((await api('get', '/api/v2/client/payment-requests').query({ status: 'nope' })).body).toMatchObject({
      attribute: 'status',
    });
    expect((await api('get', '/api/v2/client/payment-requests').query({ cursor: 'x' })).body).toMatchObject({
      attribute: 'cursor',
    });

    const txs = await api('get', '/api/v2/client/transactions').query({ status: 'mined', limit: 2 });
    expect(txs.status).toBe(200);
    expect(txs.body.data).toHaveLength(2);
    expect(txs.body.data.every((t: { transaction_status: string }) => t.transaction_status === 'mined')).toBe(true);
    const next = await api('get', '/api/v2/client/transactions').query({
      status: 'mined',
      limit: 2,
      cursor: txs.body.next_cursor,
    });
    expect(next.body.data[0].transaction_id).not.toBe(txs.body.data[1].transaction_id);
    const reference = txs.body.data[0].reference as string;
    const one = await api('get', '/api/v2/client/transactions').query({ reference });
    expect(one.body).toEqual({
      data: [expect.objectContaining({ reference, payment_request_id: expect.stringMatching(/^pr_[0-9a-f]{32}$/) })],
      next_cursor: null,
    });
    // another app's key sees none of them
    const otherKey = (await apiKeyFor(h, newAppId())).api_key;
    const other = await request(h.publicApp)
      .get(`/api/v2/client/payment-requests/${first.id}`)
      .set('Authorization', `Bearer ${otherKey}`);
    expect(other.status).toBe(404);
  });
});
