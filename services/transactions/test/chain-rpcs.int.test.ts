import request from 'supertest';
import { Registry } from 'prom-client';
import type { Hash } from 'viem';
import { testLogger } from '@attest/testing';
import { ChainMetrics } from '../src/chain/chain-metrics';
import { ChainWatcher, type ChainWatcherOptions } from '../src/chain/chain-watcher';
import { rpcPool } from '../src/chain/start-watcher';
import { TransferScanner } from '../src/chain/transfer-scanner';
import { TransactionService } from '../src/transactions/transaction-service';
import { chainWatchStore } from '../src/chain/chain-watch-store';
import { transactionStore } from '../src/transactions/transaction-store';
import {
  apiKeyFor,
  lookupTransaction,
  newAppId,
  postTransaction,
  receiveAt,
  transactionsHarness,
  type TransactionsHarness,
} from './support';
import { downRpc, garbageRpc, localChain, rpcProxy, type Address, type LocalChain } from './support/local-chain';

const WLD = 10n ** 18n;
const otherHash = (hash: string) => `0x${hash.slice(2).split('').reverse().join('')}`;

describe('chain watching with several RPCs, a quorum, a stored scan cursor and its lag (ganache)', () => {
  let h: TransactionsHarness;
  let chain: LocalChain;
  let wld: Address;
  let chainTokens: string;
  const appId = newAppId();
  let apiKey: string;
  let orders = 0;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    chain = await localChain();
    wld = await chain.deployToken(18);
    chainTokens = JSON.stringify({ worldchain: { WLD: { address: wld, decimals: 18 }, ETH: { native: true } } });
    h = await transactionsHarness({ CHAIN_TOKENS: chainTokens });
    apiKey = (await apiKeyFor(h, appId)).api_key;
  }, 60000);
  afterAll(async () => {
    for (const close of closers) await close();
    await h.close();
    await chain.close();
  });

  const metricsText = async (metrics: ChainMetrics) => {
    const registry = new Registry();
    metrics.register(registry);
    return registry.metrics();
  };

  function watcher(urls: string[], quorum: number, options: Partial<ChainWatcherOptions> = {}) {
    const metrics = new ChainMetrics();
    // a failing RPC is backed off for an hour: within a test, it stays backed off
    const pool = rpcPool(
      urls,
      { chain: 'worldchain', quorum, timeoutMs: 5000, backoffMs: 3600000 },
      metrics,
      testLogger,
    );
    const scanner = new TransferScanner(
      pool,
      chainWatchStore(h.storage.db),
      { chain: 'worldchain', tokens: h.config.CHAIN_TOKENS.worldchain, batchBlocks: 2, maxBatchesPerPass: 3 },
      testLogger,
    );
    const w = new ChainWatcher(
      pool,
      transactionStore(h.storage.db),
      new TransactionService(h.storage.db, h.storage.bus),
      {
        chain: 'worldchain',
        tokens: h.config.CHAIN_TOKENS.worldchain,
        finality: 1,
        dropTimeoutMs: 600000,
        intervalMs: 50,
        scanner,
        ...options,
      },
      testLogger,
    );
    metrics.watch('worldchain', () => w.lag());
    return { w, metrics, pool, scanner };
  }

  async function pay(to: Address, whole: bigint): Promise<{ id: string; hash: Hash }> {
    const hash = await chain.transfer(wld, to, whole * WLD);
    await receiveAt(h, appId, to);
    const res = await postTransaction(h, apiKey, {
      app_id: appId,
      type: 'pay',
      reference: `rpc-order-${++orders}`,
      transaction_hash: hash,
      chain: 'worldchain',
      token: 'WLD',
      from: chain.accounts[0],
      to,
      token_amount: (whole * 10n ** 6n).toString(),
    });
    expect(res.status).toBe(201);
    return { id: res.body.transaction_id, hash };
  }

  const statusOf = async (id: string) =>
    (await lookupTransaction(h, apiKey, id, appId)).body.transaction_status as string;

  describe('failover and RPC health', () => {
    it('decides a payment through the next RPC when the first is down and the second answers garbage; failing ones are backed off', async () => {
      const garbage = await garbageRpc(502);
      closers.push(garbage.close);
      const down = await downRpc();
      const { w, metrics } = watcher([down, garbage.url, chain.url], 1);
      const { id } = await pay(chain.accounts[1], 3n);
      await chain.mine();
      expect(await w.tick()).toEqual({ [id]: 'mined' });
      expect(await statusOf(id)).toBe('mined');
      const text = await metricsText(metrics);
      const downLabel = `1:${new URL(down).host}`;
      const garbageLabel = `2:${new URL(garbage.url).host}`;
      const goodLabel = `3:${new URL(chain.url).host}`;
      expect(text).toContain(`chain_rpc_errors_total{chain="worldchain",rpc="${downLabel}"} 1`);
      expect(text).toContain(`chain_rpc_errors_total{chain="worldchain",rpc="${garbageLabel}"} 1`);
      expect(text).toContain(`chain_rpc_errors_total{chain="worldchain",rpc="${goodLabel}"} 0`);
      expect(text).toContain(`chain_rpc_up{chain="worldchain",rpc="${downLabel}"} 0`);
      expect(text).toContain(`chain_rpc_up{chain="worldchain",rpc="${garbageLabel}"} 0`);
      expect(text).toContain(`chain_rpc_up{chain="worldchain",rpc="${goodLabel}"} 1`);

      // remembered: the next payment goes straight to the RPC that answers; the backed-off ones get no request
      const before = garbage.requests();
      const second = await pay(chain.accounts[1], 4n);
      await chain.mine();
      expect(await w.tick()).toEqual({ [second.id]: 'mined' });
      expect(garbage.requests()).toBe(before);
      expect(await metricsText(metrics)).toContain(
        `chain_rpc_errors_total{chain="worldchain",rpc="${garbageLabel}"} 1`,
      );
    });

    it('leaves a payment pending (and retried) when no RPC answers', async () => {
      const garbage = await garbageRpc(200);
      closers.push(garbage.close);
      const { w } = watcher([await downRpc(), garbage.url], 1);
      const { id } = await pay(chain.accounts[1], 5n);
      await chain.mine();
      await expect(w.tick()).rejects.toThrow();
      expect(await statusOf(id)).toBe('pending');
      // released: a watcher with a working RPC decides it at once
      expect(await watcher([chain.url], 1).w.tick()).toEqual({ [id]: 'mined' });
    });
  });

  describe('quorum on the deciding block', () => {
    it('two RPCs that disagree on the block hash leave the payment undecided; two that agree decide it', async () => {
      const liar = await rpcProxy(chain.url, (method, result) =>
        method === 'eth_getBlockByNumber' && result && typeof result === 'object' && 'hash' in result
          ? { ...result, hash: otherHash((result as { hash: string }).hash) }
          : result,
      );
      const honest = await rpcProxy(chain.url);
      closers.push(liar.close, honest.close);
      const { id } = await pay(chain.accounts[1], 6n);
      await chain.mine();

      const disagreeing = watcher([chain.url, liar.url], 2);
      expect(await disagreeing.w.tick()).toEqual({ [id]: 'undecided' });
      expect(await disagreeing.w.tick()).toEqual({ [id]: 'undecided' });
      expect(await statusOf(id)).toBe('pending');
      expect(await metricsText(disagreeing.metrics)).toContain(
        'chain_quorum_disagreements_total{chain="worldchain"} 2',
      );

      // one RPC is no quorum of two: nothing decided either
      await expect(watcher([chain.url, await downRpc()], 2).w.tick()).rejects.toThrow(
        'only 1 of the 2 RPCs the quorum needs answered eth_blockNumber',
      );
      expect(await statusOf(id)).toBe('pending');

      const agreeing = watcher([chain.url, honest.url], 2);
      expect(await agreeing.w.tick()).toEqual({ [id]: 'mined' });
      expect(await statusOf(id)).toBe('mined');
      expect(await metricsText(agreeing.metrics)).toContain('chain_quorum_disagreements_total{chain="worldchain"} 0');
    });
    it('an RPC that reports a head far ahead cannot make a block final early: the quorum takes the lowest head', async () => {
      const ahead = await rpcProxy(chain.url, (method, result) =>
        method === 'eth_blockNumber' ? `0x${(BigInt(result as string) + 100n).toString(16)}` : result,
      );
      closers.push(ahead.close);
      const { id } = await pay(chain.accounts[1], 10n);
      const quorum = watcher([ahead.url, chain.url], 2, { finality: 3 });
      expect(await quorum.w.tick()).toEqual({ [id]: 'waiting' });
      await chain.mine();
      expect(await quorum.w.tick()).toEqual({ [id]: 'waiting' });
      await chain.mine();
      expect(await quorum.w.tick()).toEqual({ [id]: 'mined' });
    });
  });

  describe('catching up after downtime', () => {
    const store = () => chainWatchStore(h.storage.db);
    beforeEach(() => h.storage.db.query('DELETE FROM chain_watch_state'));

    it('a watcher started again scans from its stored cursor, in bounded ranges, and keeps every transfer to a watched address', async () => {
      const shop = chain.accounts[2];
      const stranger = chain.accounts[3];
      await pay(shop, 1n); // recorded: the shop's address is watched; the stranger's is not
      const first = watcher([chain.url], 1);
      await first.w.scan();
      const start = (await store().processedBlock('worldchain'))!;
      expect(start).toBe(BigInt((await chain.rpc('eth_blockNumber')) as string));

      // the watcher is down: transfers happen in blocks it never saw
      const missed = [await chain.transfer(wld, shop, 7n * WLD), await chain.transfer(wld, stranger, 8n * WLD)];
      missed.push(await chain.transfer(wld, shop, 9n * WLD));
      await chain.mine(4);
      const head = BigInt((await chain.rpc('eth_blockNumber')) as string);
      expect(head - start).toBe(7n);

      // started again (a new process): 3 ranges of 2 blocks per pass, so the first pass stops 6 blocks on
      const restarted = watcher([chain.url], 1);
      await restarted.w.scan();
      expect(await store().processedBlock('worldchain')).toBe(start + 6n);
      await restarted.w.scan();
      expect(await store().processedBlock('worldchain')).toBe(head);

      const kept = await store().transfersTo('worldchain', shop);
      expect(kept.map((t) => [t.transactionHash, t.value, t.token, t.from, t.to])).toEqual([
        [missed[0], 7n * WLD, 'WLD', chain.accounts[0].toLowerCase(), shop.toLowerCase()],
        [missed[2], 9n * WLD, 'WLD', chain.accounts[0].toLowerCase(), shop.toLowerCase()],
      ]);
      expect(kept.every((t) => t.blockNumber > start && t.blockNumber <= head)).toBe(true);
      expect(await store().transfersTo('worldchain', stranger)).toEqual([]);

      // nothing new: another pass changes nothing
      await watcher([chain.url], 1).w.scan();
      expect(await store().transfersTo('worldchain', shop)).toHaveLength(2);
    });

    it('replicas scanning at once keep each transfer once and end at the same cursor', async () => {
      const shop = chain.accounts[2];
      await watcher([chain.url], 1).w.scan();
      const before = (await store().transfersTo('worldchain', shop)).length;
      await chain.transfer(wld, shop, 11n * WLD);
      await chain.transfer(wld, shop, 12n * WLD);
      await chain.mine(2);
      const head = BigInt((await chain.rpc('eth_blockNumber')) as string);
      await Promise.all([watcher([chain.url], 1).w.scan(), watcher([chain.url], 1).w.scan()]);
      expect(await store().processedBlock('worldchain')).toBe(head);
      const kept = await store().transfersTo('worldchain', shop);
      expect(kept.slice(before).map((t) => t.value)).toEqual([11n * WLD, 12n * WLD]);
    });

    it('a range whose transfer block the RPC quorum disputes is not passed; it is once they agree', async () => {
      const shop = chain.accounts[2];
      const liar = await rpcProxy(chain.url, (method, result) =>
        method === 'eth_getBlockByNumber' && result && typeof result === 'object' && 'hash' in result
          ? { ...result, hash: otherHash((result as { hash: string }).hash) }
          : result,
      );
      closers.push(liar.close);
      await watcher([chain.url], 1).w.scan();
      const start = (await store().processedBlock('worldchain'))!;
      const before = (await store().transfersTo('worldchain', shop)).length;
      await chain.transfer(wld, shop, 13n * WLD);
      await chain.mine();
      const disputed = watcher([chain.url, liar.url], 2);
      await disputed.w.scan();
      expect(await store().processedBlock('worldchain')).toBe(start);
      expect(await store().transfersTo('worldchain', shop)).toHaveLength(before);
      expect(await metricsText(disputed.metrics)).toContain('chain_quorum_disagreements_total{chain="worldchain"} 1');
      const honest = await rpcProxy(chain.url);
      closers.push(honest.close);
      await watcher([chain.url, honest.url], 2).w.scan();
      expect(await store().processedBlock('worldchain')).toBeGreaterThan(start);
      expect((await store().transfersTo('worldchain', shop)).at(-1)?.value).toBe(13n * WLD);
    });
  });

  describe('lag', () => {
    it('a stopped watcher: the lag metric and /readyz detail grow with the chain; past CHAIN_MAX_LAG_BLOCKS the chain check is degraded', async () => {
      const second = await rpcProxy(chain.url);
      closers.push(second.close);
      const service = await transactionsHarness({
        CHAIN_RPC_URL: `${chain.url}, ${second.url}`,
        CHAIN_RPC_QUORUM: '2',
        CHAIN_TOKENS: chainTokens,
        CHAIN_FINALITY: '1',
        // one pass at start, the next in an hour: the watcher has in effect stopped after its first pass
        CHAIN_POLL_INTERVAL_MS: '3600000',
        CHAIN_MAX_LAG_BLOCKS: '3',
      });
      try {
        let processed: bigint | null = null;
        for (let i = 0; i < 200 && processed === null; i++) {
          processed = await chainWatchStore(service.storage.db).processedBlock('worldchain');
          if (processed === null) await new Promise((r) => setTimeout(r, 50));
        }
        expect(processed).not.toBeNull();
        const ready = await request(service.publicApp).get('/readyz');
        expect(ready.status).toBe(200);
        expect(ready.body).toEqual({
          status: 'ready',
          checks: { database: 'ok', cache: 'ok', chain: 'ok' },
          detail: {
            chain: {
              head_block: Number(processed),
              final_block: Number(processed),
              processed_block: Number(processed),
              lag_blocks: 0,
              max_lag_blocks: 3,
              rpcs: 2,
              rpcs_up: 2,
            },
          },
        });

        await chain.mine(5);
        const behind = await request(service.publicApp).get('/readyz');
        // the public API does not need the watcher: still ready, the chain check says it is behind
        expect(behind.status).toBe(200);
        expect(behind.body.status).toBe('ready');
        expect(behind.body.checks.chain).toBe('degraded');
        expect(behind.body.detail.chain).toMatchObject({
          head_block: Number(processed) + 5,
          processed_block: Number(processed),
          lag_blocks: 5,
        });
        const metrics = (await request(service.adminApp).get('/metrics').expect(200)).text;
        expect(metrics).toMatch(/^chain_watch_lag_blocks\{[^}]*chain="worldchain"[^}]*\} 5$/m);
        expect(metrics).toMatch(
          new RegExp(`^chain_watch_processed_block\\{[^}]*chain="worldchain"[^}]*\\} ${processed}$`, 'm'),
        );
        expect(metrics).toMatch(
          new RegExp(`^chain_watch_head_block\\{[^}]*chain="worldchain"[^}]*\\} ${processed! + 5n}$`, 'm'),
        );
      } finally {
        await service.close();
      }
    });

    it('reports the chain check unavailable, with no RPC host in the public detail, when no RPC answers', async () => {
      const { w } = watcher([await downRpc()], 1);
      await h.storage.db.query(
        `INSERT INTO chain_watch_state (chain, processed_block) VALUES ('worldchain', 1) ON CONFLICT (chain) DO NOTHING`,
      );
      const report = await w.readinessCheck(10).check();
      expect(report).toEqual({
        status: 'unavailable',
        detail: { error: expect.any(String), max_lag_blocks: 10, rpcs: 1, rpcs_up: 0 },
      });
      expect(JSON.stringify(report)).not.toContain('127.0.0.1');
    });
  });
});
