import request from 'supertest';
import { encodeFunctionData, type Hash } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { AuditLog } from '@attest/common';
import { randomHex, testLogger } from '@attest/testing';
import { ChainWatcher } from '../src/chain/chain-watcher';
import { ChainMetrics } from '../src/chain/chain-metrics';
import { rpcPool } from '../src/chain/start-watcher';
import { TransferScanner } from '../src/chain/transfer-scanner';
import { PaymentRequestService } from '../src/payment-requests/payment-request-service';
import { HttpPriceSource } from '../src/payment-requests/price-quote';
import { TransactionService } from '../src/transactions/transaction-service';
import { chainWatchStore } from '../src/chain/chain-watch-store';
import { transactionStore } from '../src/transactions/transaction-store';
import { TEST_TOKEN_ABI } from './fixtures/test-token';
import {
  apiKeyFor,
  newAppId,
  postTransaction,
  receiveAt,
  transactionsHarness,
  type TransactionsHarness,
} from './support';
import { localChain, type Address, type LocalChain } from './support/local-chain';
import { PriceStub } from './support/price-stub';

// ganache's deterministic wallet, account 0: to sign a transaction and send the same bytes again after a reorganisation
const ACCOUNT_0_KEY = '0x4f3edf983ac636a65a842ce7c78d9aa706d3b113bce9c46f30d7d21715b23b1d';

interface View {
  id: string;
  status: string;
  reason: string | null;
  reason_detail: string | null;
  amount_paid: string;
  payments: {
    transaction_id: string;
    reference: string;
    transaction_hash: string | null;
    from: string;
    status: string;
    amount_received: string | null;
    block_number: string | null;
    confirmations: number | null;
    late: boolean;
  }[];
}

/** A fresh address nobody else in this file pays: each test's requests have their own recipient. */
const freshAddress = () => `0x${randomHex(20)}` as Address;

describe('payment requests and the chain: rising confirmations, reorganisations, transfers nobody recorded (ganache)', () => {
  let h: TransactionsHarness;
  let chain: LocalChain;
  let usdce: Address;
  let wld: Address;
  const prices = new PriceStub();
  const appId = newAppId();
  let apiKey: string;

  beforeAll(async () => {
    chain = await localChain();
    usdce = await chain.deployToken(6);
    wld = await chain.deployToken(18);
    prices.prices = { USDCE: { amount: '100', decimals: 2 }, WLD: { amount: '250', decimals: 2 } };
    h = await transactionsHarness({
      CHAIN_TOKENS: JSON.stringify({
        worldchain: { USDCE: { address: usdce, decimals: 6 }, WLD: { address: wld, decimals: 18 } },
      }),
      PRICES_URL: await prices.listen(),
      PAYMENT_REQUEST_SWEEP_INTERVAL_MS: '3600000',
    });
    apiKey = (await apiKeyFor(h, appId)).api_key;
  }, 60000);
  afterAll(async () => {
    await h.close();
    await prices.close();
    await chain.close();
  });

  /** The chain watcher as the service runs it: payment requests settled (with the audit trail), and a transfer scanner. */
  function watcher(finality: number) {
    const pool = rpcPool([chain.url], { chain: 'worldchain', quorum: 1 }, new ChainMetrics(), testLogger);
    const tokens = h.config.CHAIN_TOKENS.worldchain;
    const audit = new AuditLog(h.storage.db, testLogger, { retentionDays: 30 });
    const settlement = new PaymentRequestService(
      h.storage.db,
      new HttpPriceSource('http://127.0.0.1:9', { maxAgeMs: 300000 }),
      h.storage.bus,
      { audit },
    );
    const scanner = new TransferScanner(
      pool,
      chainWatchStore(h.storage.db),
      { chain: 'worldchain', tokens, batchBlocks: 100 },
      testLogger,
    );
    return new ChainWatcher(
      pool,
      transactionStore(h.storage.db),
      new TransactionService(h.storage.db, h.storage.bus, { audit, settlement }),
      { chain: 'worldchain', tokens, finality, dropTimeoutMs: 600000, intervalMs: 50, scanner },
      testLogger,
    );
  }

  const api = (method: 'get' | 'post', path: string) =>
    request(h.publicApp)[method](path).set('Authorization', `Bearer ${apiKey}`);

  let orders = 0;
  async function create(to: Address, tokenAmount: string): Promise<View> {
    await receiveAt(h, appId, to);
    const res = await api('post', '/api/v2/client/payment-requests').send({
      reference: `chain-order-${++orders}`,
      chain: 'worldchain',
      token: 'USDCE',
      to,
      token_amount: tokenAmount,
    });
    expect(res.status).toBe(201);
    return res.body;
  }

  let payments = 0;
  const recordPayment = (requestId: string, hash: Hash, to: Address, amount: string) =>
    postTransaction(h, apiKey, {
      app_id: appId,
      type: 'pay',
      reference: `chain-payment-${++payments}`,
      transaction_hash: hash,
      chain: 'worldchain',
      token: 'USDCE',
      to,
      from: chain.accounts[0],
      token_amount: amount,
      payment_request_id: requestId,
    });

  const read = async (id: string): Promise<View> => {
    const res = await api('get', `/api/v2/client/payment-requests/${id}`);
    expect(res.status).toBe(200);
    return res.body;
  };

  const events = async (id: string) =>
    (
      await h.storage.db.query<{ type: string; body: string }>(
        'SELECT type, body FROM webhook_events WHERE payment_request_id = $1 ORDER BY seq',
        [id],
      )
    ).map((e) => ({ type: e.type, ...(JSON.parse(e.body) as { data: View }) }));

  /** A signed transfer of USDCE from account 0, to send again (the same transaction) after a reorganisation. */
  async function signedTransfer(to: Address, value: bigint): Promise<`0x${string}`> {
    const client = (await import('../src/chain/start-watcher')).chainClient(chain.url);
    return privateKeyToAccount(ACCOUNT_0_KEY).signTransaction({
      chainId: 1337,
      nonce: await client.getTransactionCount({ address: chain.accounts[0] }),
      to: usdce,
      data: encodeFunctionData({ abi: TEST_TOKEN_ABI, functionName: 'transfer', args: [to, value] }),
      gas: 100000n,
      gasPrice: await client.getGasPrice(),
    });
  }
  const sendRaw = async (raw: `0x${string}`) => (await chain.rpc('eth_sendRawTransaction', [raw])) as Hash;
  const receiptBlock = async (hash: Hash) =>
    BigInt(((await chain.rpc('eth_getTransactionReceipt', [hash])) as { blockNumber: string }).blockNumber);

  describe('confirmations', () => {
    it('keep rising while a request is detected, even when no payment is left for this watcher to check', async () => {
      const shop = freshAddress();
      const r = await create(shop, '1000000');
      const hash = await chain.transfer(usdce, shop, 1000000n);
      expect((await recordPayment(r.id, hash, shop, '1000000')).status).toBe(201);
      const w = watcher(5);
      await w.tick();
      expect(await read(r.id)).toMatchObject({ status: 'detected', payments: [{ confirmations: 1 }] });

      // another replica leased the payment (and stopped): this watcher has nothing to check, yet the head moves on
      const leased = await transactionStore(h.storage.db).leasePending('worldchain', 50, 3600000);
      expect(leased.map((l) => l.transaction.transactionHash)).toContain(hash);
      await chain.mine(2);
      expect(await w.tick()).toEqual({});
      expect(await read(r.id)).toMatchObject({ status: 'detected', payments: [{ confirmations: 3 }] });
      await chain.mine(1);
      await w.tick();
      expect((await read(r.id)).payments[0].confirmations).toBe(4);

      // the lease ends: the payment is final at 5 confirmations, and the request paid
      for (const l of leased) await transactionStore(h.storage.db).releaseLease(l.transaction.id);
      await chain.mine(1);
      await w.tick();
      expect(await read(r.id)).toMatchObject({ status: 'paid', payments: [{ status: 'mined', confirmations: 5 }] });
    });
  });

  describe('reorganisations', () => {
    it('a detected payment whose block is reorganised away takes the request back to pending, with its event and audit record; paid only once final again', async () => {
      const shop = freshAddress();
      const r = await create(shop, '2000000');
      const raw = await signedTransfer(shop, 2000000n);
      const snapshot = await chain.rpc('evm_snapshot');
      const hash = await sendRaw(raw);
      const firstBlock = await receiptBlock(hash);
      expect((await recordPayment(r.id, hash, shop, '2000000')).status).toBe(201);
      const w = watcher(3);
      await w.tick();
      expect(await read(r.id)).toMatchObject({ status: 'detected', reason: 'in_block' });

      // its block is reorganised away and the chain grows past where it would have been final
      expect(await chain.rpc('evm_revert', [snapshot])).toBe(true);
      await chain.mine(3);
      expect(Object.values(await w.tick())).toContain('reorged');
      const reverted = await read(r.id);
      expect(reverted).toMatchObject({
        status: 'pending',
        reason: 'reorganised',
        amount_paid: '0',
        payments: [{ status: 'pending', block_number: null, confirmations: null }],
      });
      expect(reverted.reason_detail).toContain(hash);
      const [audit] = await h.storage.db.query<{ actor_type: string; actor: string; detail: Record<string, string> }>(
        "SELECT actor_type, actor, detail FROM audit_events WHERE type = 'payment_request.reorganised' AND subject = $1",
        [r.id],
      );
      expect(audit).toMatchObject({
        actor_type: 'system',
        actor: 'chain',
        detail: { from: 'detected', to: 'pending' },
      });
      // nothing of the vanished block is counted, however far the chain goes
      await chain.mine(3);
      await w.tick();
      expect(await read(r.id)).toMatchObject({ status: 'pending', amount_paid: '0' });

      // the same transaction is included again: detected in its new block, paid once that is final
      await sendRaw(raw);
      const secondBlock = await receiptBlock(hash);
      expect(secondBlock).toBeGreaterThan(firstBlock);
      await w.tick();
      expect(await read(r.id)).toMatchObject({ status: 'detected', payments: [{ block_number: String(secondBlock) }] });
      await chain.mine(2);
      await w.tick();
      expect(await read(r.id)).toMatchObject({
        status: 'paid',
        amount_paid: '2000000',
        payments: [{ status: 'mined', block_number: String(secondBlock) }],
      });
      const sent = await events(r.id);
      expect(sent.map((e) => [e.type, e.data.status, e.data.reason])).toEqual([
        ['payment_request.created', 'pending', null],
        ['payment_request.detected', 'detected', 'in_block'],
        ['payment_request.pending', 'pending', 'reorganised'],
        ['payment_request.detected', 'detected', 'in_block'],
        ['payment_request.paid', 'paid', null],
      ]);
    });

    it('a late payment whose block is reorganised away takes an expired request back to expired, not payable again', async () => {
      const shop = freshAddress();
      const r = await create(shop, '2000000');
      await h.storage.db.query("UPDATE payment_requests SET expires_at = now() - interval '1 minute' WHERE id = $1", [
        r.id,
      ]);
      await h.storage.bus.publish('cache:payment-requests', r.id);
      expect(await read(r.id)).toMatchObject({ status: 'expired' });
      const raw = await signedTransfer(shop, 2000000n);
      const snapshot = await chain.rpc('evm_snapshot');
      const hash = await sendRaw(raw);
      expect((await recordPayment(r.id, hash, shop, '2000000')).status).toBe(201);
      const w = watcher(3);
      await w.tick();
      expect(await read(r.id)).toMatchObject({ status: 'detected' });
      expect(await chain.rpc('evm_revert', [snapshot])).toBe(true);
      await chain.mine(3);
      await w.tick();
      expect(await read(r.id)).toMatchObject({ status: 'expired', reason: 'reorganised', amount_paid: '0' });
      const [audit] = await h.storage.db.query<{ detail: Record<string, string> }>(
        "SELECT detail FROM audit_events WHERE type = 'payment_request.reorganised' AND subject = $1",
        [r.id],
      );
      expect(audit.detail).toMatchObject({ from: 'detected', to: 'expired' });
    });

    it('a payment moved to another block by a reorganisation is detected again there, with a new event', async () => {
      const shop = freshAddress();
      const r = await create(shop, '3000000');
      const raw = await signedTransfer(shop, 3000000n);
      const snapshot = await chain.rpc('evm_snapshot');
      const hash = await sendRaw(raw);
      const firstBlock = await receiptBlock(hash);
      expect((await recordPayment(r.id, hash, shop, '3000000')).status).toBe(201);
      const w = watcher(4);
      await w.tick();
      expect(await read(r.id)).toMatchObject({ status: 'detected', payments: [{ block_number: String(firstBlock) }] });

      // reorganised: the same transaction lands in a later block before the watcher looks again
      await chain.rpc('evm_revert', [snapshot]);
      await chain.mine(1);
      await sendRaw(raw);
      const secondBlock = await receiptBlock(hash);
      expect(secondBlock).toBe(firstBlock + 1n);
      await w.tick();
      const moved = await read(r.id);
      expect(moved).toMatchObject({
        status: 'detected',
        payments: [{ block_number: String(secondBlock), confirmations: 1 }],
      });
      expect(moved.reason_detail).toContain(`moved to block ${secondBlock}`);
      await chain.mine(3);
      await w.tick();
      expect(await read(r.id)).toMatchObject({ status: 'paid', payments: [{ block_number: String(secondBlock) }] });
      expect((await events(r.id)).map((e) => e.type)).toEqual([
        'payment_request.created',
        'payment_request.detected',
        'payment_request.detected',
        'payment_request.paid',
      ]);
    });
  });

  describe('transfers nobody recorded', () => {
    /** Mines the transfers, scans the final blocks (finality 1: the head) and attaches them. */
    const scanned = async () => {
      await chain.mine(1);
      await watcher(1).scan();
    };
    const outcomeOf = async (hash: Hash) =>
      (
        await h.storage.db.query<{ outcome: string | null; payment_request_id: string | null }>(
          'SELECT outcome, payment_request_id FROM chain_transfers WHERE transaction_hash = $1',
          [hash],
        )
      )[0];

    beforeAll(async () => {
      // the first scan starts at the final block then: later transfers are scanned
      await watcher(1).scan();
    });

    it('a transfer to the request’s address counts without the hash being recorded, claimed once, with its events', async () => {
      const shop = freshAddress();
      const r = await create(shop, '1500000');
      const hash = await chain.transfer(usdce, shop, 1500000n);
      await scanned();
      const paid = await read(r.id);
      expect(paid).toMatchObject({
        status: 'paid',
        amount_paid: '1500000',
        payments: [
          {
            reference: expect.stringMatching(new RegExp(`^chain:${hash}:\\d+$`)),
            transaction_hash: hash,
            from: chain.accounts[0].toLowerCase(),
            status: 'mined',
            amount_received: '1500000',
            block_number: String(await receiptBlock(hash)),
            late: false,
          },
        ],
      });
      expect((await events(r.id)).map((e) => e.type)).toEqual(['payment_request.created', 'payment_request.paid']);
      const txEvents = await h.storage.db.query<{ type: string }>(
        'SELECT type FROM webhook_events WHERE transaction_id = $1 ORDER BY seq',
        [paid.payments[0].transaction_id],
      );
      expect(txEvents.map((e) => e.type)).toEqual(['transaction.created', 'transaction.mined']);
      const claims = await h.storage.db.query<{ transaction_id: string; log_index: number }>(
        'SELECT transaction_id, log_index FROM transfer_claims WHERE transaction_hash = $1',
        [hash],
      );
      expect(claims).toEqual([{ transaction_id: paid.payments[0].transaction_id, log_index: expect.any(Number) }]);
      expect(await outcomeOf(hash)).toEqual({ outcome: 'attached', payment_request_id: r.id });
      const [audit] = await h.storage.db.query<{ actor: string }>(
        "SELECT actor FROM audit_events WHERE type = 'transaction.recorded' AND subject = $1",
        [paid.payments[0].transaction_id],
      );
      expect(audit).toEqual({ actor: 'chain' });

      // the wallet records it afterwards, naming this request: the payment already counted, not a second one
      const recordedLate = await recordPayment(r.id, hash, shop, '1500000');
      expect(recordedLate.status).toBe(200);
      expect(recordedLate.body).toMatchObject({
        transaction_id: paid.payments[0].transaction_id,
        transaction_status: 'mined',
      });
      expect((await read(r.id)).payments).toHaveLength(1);
      // the transaction is claimed: recorded for another request, it counts nowhere again
      const other = await create(shop, '1500000');
      const again = await recordPayment(other.id, hash, shop, '1500000');
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ code: 'transaction_already_claimed' });
      await scanned();
      expect(await read(other.id)).toMatchObject({ status: 'pending', payments: [] });
      expect(await read(r.id)).toMatchObject({ status: 'paid', amount_paid: '1500000' });
    });

    it('several open requests for one address: a transfer is matched only to one owed exactly its amount, oldest first; otherwise it is not counted', async () => {
      const shop = freshAddress();
      const one = await create(shop, '1000000');
      const two = await create(shop, '2000000');
      const twoAgain = await create(shop, '2000000');

      const odd = await chain.transfer(usdce, shop, 1500000n);
      await scanned();
      expect(await outcomeOf(odd)).toEqual({ outcome: 'ambiguous', payment_request_id: null });
      for (const r of [one, two, twoAgain]) expect(await read(r.id)).toMatchObject({ status: 'pending', payments: [] });

      const first = await chain.transfer(usdce, shop, 2000000n);
      await scanned();
      expect(await read(two.id)).toMatchObject({ status: 'paid', payments: [{ transaction_hash: first }] });
      expect(await read(twoAgain.id)).toMatchObject({ status: 'pending', payments: [] });

      const second = await chain.transfer(usdce, shop, 2000000n);
      const exact = await chain.transfer(usdce, shop, 1000000n);
      await scanned();
      expect(await read(twoAgain.id)).toMatchObject({ status: 'paid', payments: [{ transaction_hash: second }] });
      expect(await read(one.id)).toMatchObject({ status: 'paid', payments: [{ transaction_hash: exact }] });
      // the ambiguous transfer stays unclaimed: recorded by hash naming a request, it counts there
      expect(await outcomeOf(odd)).toEqual({ outcome: 'ambiguous', payment_request_id: null });
      const claimed = await h.storage.db.query('SELECT 1 FROM transfer_claims WHERE transaction_hash = $1', [odd]);
      expect(claimed).toHaveLength(0);
    });

    it('a request whose own recorded payment is still in flight is not guessed for a transfer nobody recorded', async () => {
      const shop = freshAddress();
      const older = await create(shop, '1000000');
      const newer = await create(shop, '1000000');
      // the older order's wallet recorded its payment; it is not in a block yet
      const inFlight = `0x${randomHex(32)}` as Hash;
      expect((await recordPayment(older.id, inFlight, shop, '1000000')).status).toBe(201);
      // the newer order's customer pays without recording: it is the newer order's payment, not the older's
      const hash = await chain.transfer(usdce, shop, 1000000n);
      await scanned();
      expect(await outcomeOf(hash)).toEqual({ outcome: 'attached', payment_request_id: newer.id });
      expect(await read(newer.id)).toMatchObject({ status: 'paid', payments: [{ transaction_hash: hash }] });
      expect(await read(older.id)).toMatchObject({ status: 'pending', amount_paid: '0' });
    });

    it('two replicas attaching at once: two equal transfers pay two equal requests, one each', async () => {
      const shop = freshAddress();
      const a = await create(shop, '1000000');
      const b = await create(shop, '1000000');
      const hashes = [await chain.transfer(usdce, shop, 1000000n), await chain.transfer(usdce, shop, 1000000n)];
      await chain.mine(1);
      await Promise.all([watcher(1).scan(), watcher(1).scan()]);
      const views = [await read(a.id), await read(b.id)];
      for (const v of views) {
        expect(v).toMatchObject({ status: 'paid', amount_paid: '1000000' });
        expect(v.payments).toHaveLength(1);
      }
      expect(views.map((v) => v.payments[0].transaction_hash).sort()).toEqual([...hashes].sort());
    });

    it('the only open request for an address takes any amount: two transfers make it underpaid, then paid', async () => {
      const shop = freshAddress();
      const r = await create(shop, '1000000');
      await chain.transfer(usdce, shop, 400000n);
      await scanned();
      expect(await read(r.id)).toMatchObject({ status: 'underpaid', amount_paid: '400000' });
      await chain.transfer(usdce, shop, 600000n);
      await scanned();
      const paid = await read(r.id);
      expect(paid).toMatchObject({ status: 'paid', amount_paid: '1000000' });
      expect(paid.payments.map((p) => p.amount_received)).toEqual(['400000', '600000']);
    });

    it('a transfer after the request expired is recorded as paid_late, not lost', async () => {
      const shop = freshAddress();
      const r = await create(shop, '1000000');
      await h.storage.db.query("UPDATE payment_requests SET expires_at = now() - interval '1 minute' WHERE id = $1", [
        r.id,
      ]);
      await h.storage.bus.publish('cache:payment-requests', r.id);
      expect(await read(r.id)).toMatchObject({ status: 'expired' });
      await chain.transfer(usdce, shop, 1000000n);
      await scanned();
      const late = await read(r.id);
      expect(late).toMatchObject({ status: 'paid_late', reason: 'paid_after_expiry', amount_paid: '1000000' });
      expect(late.payments[0].late).toBe(true);
      expect((await events(r.id)).map((e) => e.type)).toEqual([
        'payment_request.created',
        'payment_request.expired',
        'payment_request.paid_late',
      ]);
    });

    it('a request accepting two tokens is paid by a transfer in either: settled in that token, claimed once', async () => {
      const shop = freshAddress();
      await receiveAt(h, appId, shop);
      const created = await api('post', '/api/v2/client/payment-requests').send({
        reference: `chain-order-${++orders}`,
        chain: 'worldchain',
        accepted_tokens: ['USDCE', 'WLD'],
        to: shop,
        amount: '10',
        currency: 'USD',
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ token: null, amount_due: null });
      // 10 USD at 2.50 USD a WLD: 4 WLD (6 decimals in the API, 18 on the chain)
      const hash = await chain.transfer(wld, shop, 4n * 10n ** 18n);
      await scanned();
      const paid = await read(created.body.id);
      expect(paid).toMatchObject({
        status: 'paid',
        token: 'WLD',
        amount_due: '4000000',
        amount_paid: '4000000',
        payments: [{ transaction_hash: hash, status: 'mined', amount_received: '4000000' }],
      });
      expect(await outcomeOf(hash)).toEqual({ outcome: 'attached', payment_request_id: created.body.id });
      // settled in WLD: a USDCE transfer to the same address is not counted toward it
      const usdceHash = await chain.transfer(usdce, shop, 10000000n);
      await scanned();
      expect(await outcomeOf(usdceHash)).toEqual({ outcome: 'unmatched', payment_request_id: null });
      expect((await read(created.body.id)).payments).toHaveLength(1);
    });

    it('a transfer nobody recorded is matched only to requests of the app that receives at its address (issue 40, item 1)', async () => {
      const shop = freshAddress();
      // another app held the address and asked to be paid there; an operator gave the address to this app since
      const other = newAppId();
      const otherKey = (await apiKeyFor(h, other)).api_key;
      await receiveAt(h, other, shop);
      const theirs = await request(h.publicApp)
        .post('/api/v2/client/payment-requests')
        .set('Authorization', `Bearer ${otherKey}`)
        .send({ reference: 'theirs', chain: 'worldchain', token: 'USDCE', to: shop, token_amount: '1000000' });
      expect(theirs.status).toBe(201);
      expect((await h.admin('delete', `/apps/${other}/receiving-addresses/worldchain/${shop}`)).status).toBe(200);
      const ours = await create(shop, '1000000');
      const hash = await chain.transfer(usdce, shop, 1000000n);
      await scanned();
      expect(await outcomeOf(hash)).toEqual({ outcome: 'attached', payment_request_id: ours.id });
      expect(await read(ours.id)).toMatchObject({ status: 'paid', amount_paid: '1000000' });
      const theirsNow = await request(h.publicApp)
        .get(`/api/v2/client/payment-requests/${theirs.body.id}`)
        .set('Authorization', `Bearer ${otherKey}`);
      expect(theirsNow.body).toMatchObject({ status: 'pending', amount_paid: '0', payments: [] });
    });

    it('a transfer to an address nobody receives at is matched to no request', async () => {
      const shop = freshAddress();
      const r = await create(shop, '1000000');
      expect((await h.admin('delete', `/apps/${appId}/receiving-addresses/worldchain/${shop}`)).status).toBe(200);
      const hash = await chain.transfer(usdce, shop, 1000000n);
      await scanned();
      expect(await outcomeOf(hash)).toEqual({ outcome: 'unmatched', payment_request_id: null });
      expect(await read(r.id)).toMatchObject({ status: 'pending', payments: [] });
    });

    it('a transfer whose hash was recorded is left to the recorded payment: counted once', async () => {
      const shop = freshAddress();
      const r = await create(shop, '1000000');
      const hash = await chain.transfer(usdce, shop, 1000000n);
      expect((await recordPayment(r.id, hash, shop, '1000000')).status).toBe(201);
      await scanned();
      expect(await outcomeOf(hash)).toEqual({ outcome: 'recorded', payment_request_id: null });
      await watcher(1).tick();
      const paid = await read(r.id);
      expect(paid).toMatchObject({ status: 'paid', amount_paid: '1000000' });
      expect(paid.payments).toHaveLength(1);
      expect(paid.payments[0].reference).toMatch(/^chain-payment-/);
    });
  });
});
