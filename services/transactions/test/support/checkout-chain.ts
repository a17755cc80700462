import request from 'supertest';
import type { Hash } from 'viem';
import { AuditLog } from '@attest/common';
import { randomHex, testLogger } from '@attest/testing';
import { ChainMetrics } from '../../src/chain/chain-metrics';
import { ChainWatcher } from '../../src/chain/chain-watcher';
import { chainWatchStore } from '../../src/chain/chain-watch-store';
import { rpcPool } from '../../src/chain/start-watcher';
import { TransferScanner } from '../../src/chain/transfer-scanner';
import { PaymentRequestService } from '../../src/payment-requests/payment-request-service';
import { HttpPriceSource } from '../../src/payment-requests/price-quote';
import { TransactionService } from '../../src/transactions/transaction-service';
import { transactionStore } from '../../src/transactions/transaction-store';
import {
  apiKeyFor,
  newAppId,
  postTransaction,
  receiveAt,
  transactionsHarness,
  type TransactionsHarness,
} from '../support';
import { localChain, type Address, type LocalChain } from './local-chain';
import { PriceStub } from './price-stub';

/** A payment request as the client API answers it (the fields the checkout tests read). */
export interface RequestView {
  id: string;
  status: string;
  reason: string | null;
  reason_detail: string | null;
  amount_due: string | null;
  amount_paid: string;
  amount_remaining: string | null;
  to: string;
  expires_at: string;
  payments: {
    transaction_id: string;
    transaction_hash: string | null;
    from: string;
    status: string;
    amount_received: string | null;
    late: boolean;
  }[];
  [field: string]: unknown;
}

/** A fresh address nobody else pays: each test's requests have their own recipient. */
export const freshAddress = () => `0x${randomHex(20)}` as Address;

/**
 * The transactions service with a ganache chain holding a 6-decimal USDCE, an app and its API key, and the
 * chain watcher as the service runs it (payment requests settled, transfers nobody recorded scanned).
 */
export async function checkoutChain(
  env: Record<string, string> | ((chain: LocalChain) => Record<string, string>) = {},
) {
  const chain: LocalChain = await localChain();
  const usdce = await chain.deployToken(6);
  const prices = new PriceStub();
  prices.prices = { USDCE: { amount: '100', decimals: 2 } };
  const h: TransactionsHarness = await transactionsHarness({
    CHAIN_TOKENS: JSON.stringify({ worldchain: { USDCE: { address: usdce, decimals: 6 } } }),
    PRICES_URL: await prices.listen(),
    PAYMENT_REQUEST_SWEEP_INTERVAL_MS: '3600000',
    ...(typeof env === 'function' ? env(chain) : env),
  });
  const appId = newAppId();
  const apiKey = (await apiKeyFor(h, appId)).api_key;

  const api = (method: 'get' | 'post' | 'put', path: string, key = apiKey) =>
    request(h.publicApp)[method](path).set('Authorization', `Bearer ${key}`);

  /** The chain watcher as the service runs it, deciding at `finality` confirmations. */
  function watcher(finality = 1) {
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

  let orders = 0;
  async function create(to: Address, fields: Record<string, unknown> = {}): Promise<RequestView> {
    // the app receives at `to` (one of its receiving addresses, as every payment request needs)
    await receiveAt(h, appId, to);
    const res = await api('post', '/api/v2/client/payment-requests').send({
      reference: `checkout-order-${++orders}-${randomHex(4)}`,
      chain: 'worldchain',
      token: 'USDCE',
      to,
      token_amount: '1000000',
      ...fields,
    });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as RequestView;
  }

  let payments = 0;
  const recordPayment = (requestId: string, hash: Hash, to: Address, amount = '1000000') =>
    postTransaction(h, apiKey, {
      app_id: appId,
      type: 'pay',
      reference: `checkout-payment-${++payments}-${randomHex(4)}`,
      transaction_hash: hash,
      chain: 'worldchain',
      token: 'USDCE',
      to,
      from: chain.accounts[0],
      token_amount: amount,
      payment_request_id: requestId,
    });

  const read = async (id: string): Promise<RequestView> => {
    const res = await api('get', `/api/v2/client/payment-requests/${id}`);
    if (res.status !== 200) throw new Error(`read: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as RequestView;
  };

  /** The payment_request.* events in the outbox, oldest first. */
  const events = async (id: string) =>
    (
      await h.storage.db.query<{ type: string; body: string }>(
        'SELECT type, body FROM webhook_events WHERE payment_request_id = $1 ORDER BY seq',
        [id],
      )
    ).map((e) => ({ type: e.type, ...(JSON.parse(e.body) as { data: RequestView }) }));

  /** Mines a block and scans the final blocks (finality 1: the head), attaching transfers nobody recorded. */
  const scanned = async () => {
    await chain.mine(1);
    await watcher(1).scan();
  };

  /** The time of the block that holds `hash`, in whole seconds as the chain keeps it. */
  const blockTime = async (hash: Hash): Promise<number> => {
    const receipt = (await chain.rpc('eth_getTransactionReceipt', [hash])) as { blockNumber: string };
    const block = (await chain.rpc('eth_getBlockByNumber', [receipt.blockNumber, false])) as { timestamp: string };
    return Number(BigInt(block.timestamp));
  };

  /** Moves the request's expiry (a write behind the service, so its read cache is told). */
  const setExpiry = async (id: string, sql: string, params: unknown[] = []) => {
    await h.storage.db.query(`UPDATE payment_requests SET expires_at = ${sql} WHERE id = $1`, [id, ...params]);
    await h.storage.bus.publish('cache:payment-requests', id);
  };

  async function close() {
    await h.close();
    await prices.close();
    await chain.close();
  }

  return {
    h,
    chain,
    usdce,
    prices,
    appId,
    apiKey,
    api,
    watcher,
    create,
    recordPayment,
    read,
    events,
    scanned,
    blockTime,
    setExpiry,
    close,
  };
}
export type CheckoutChain = Awaited<ReturnType<typeof checkoutChain>>;
