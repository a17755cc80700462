import { createPublicClient, http, webSocket, type PublicClient } from 'viem';
import type { Db, Logger, ReadinessCheck } from '@attest/common';
import type { ChainTokens } from '../kernel/chain-tokens';
import type { FinalTransactions } from '../kernel/chain-transfer';
import { transactionStore, type TransactionService } from '../transactions';
import type { ChainMetrics } from './chain-metrics';
import { chainWatchStore } from './chain-watch-store';
import { ChainWatcher } from './chain-watcher';
import { FinalTransactionReader } from './final-transactions';
import { RpcPool, rpcLabel, type RpcPoolOptions } from './rpc-pool';
import { TransferScanner } from './transfer-scanner';
import type { Finality } from './verify-transfer';

/** A viem client for one RPC URL. retryCount: retries of the same URL before the pool fails over to the next. */
export function chainClient(url: string, options: { timeoutMs?: number; retryCount?: number } = {}): PublicClient {
  const { timeoutMs = 10000, retryCount = 2 } = options;
  const transport = url.startsWith('ws')
    ? webSocket(url, { timeout: timeoutMs, retryCount })
    : http(url, { timeout: timeoutMs, retryCount });
  // cacheTime 0: each pass must see the current head, not one cached for seconds.
  return createPublicClient({ transport, cacheTime: 0 }) as PublicClient;
}

/** The RPCs of CHAIN_RPC_URL as a pool: with several, an RPC that fails is not retried, the next one is asked. */
export function rpcPool(
  urls: readonly string[],
  options: RpcPoolOptions & { timeoutMs?: number },
  metrics: ChainMetrics,
  logger: Logger,
): RpcPool {
  const retryCount = urls.length > 1 ? 0 : 2;
  const endpoints = urls.map((url, i) => ({
    label: rpcLabel(url, i),
    client: chainClient(url, { timeoutMs: options.timeoutMs, retryCount }),
  }));
  return new RpcPool(endpoints, options, metrics, logger);
}

export interface StartedChainWatcher {
  watcher: ChainWatcher;
  /** /readyz's `chain` check: the lag, and whether it is beyond CHAIN_MAX_LAG_BLOCKS. */
  readiness: ReadinessCheck;
  /** Final transactions read as the watcher decides them (same RPCs, finality and quorum): refunds are verified with it. */
  finalTransactions: FinalTransactions;
}

/** The settings the watcher runs with (TransactionsConfig's CHAIN_* and what config.ts derives from them). */
export interface ChainWatcherConfig {
  CHAIN_NAME: string;
  CHAIN_TOKENS: ChainTokens;
  chainRpcUrls: readonly string[];
  CHAIN_RPC_QUORUM: number;
  CHAIN_RPC_TIMEOUT_MS: number;
  CHAIN_SCAN_BLOCKS: number;
  chainFinality: Finality;
  CHAIN_DROP_TIMEOUT_SECONDS: number;
  CHAIN_POLL_INTERVAL_MS: number;
  CHAIN_MAX_LAG_BLOCKS: number;
}

export async function startChainWatcher(
  config: ChainWatcherConfig,
  db: Db,
  transactions: TransactionService,
  metrics: ChainMetrics,
  logger: Logger,
): Promise<StartedChainWatcher> {
  const chain = config.CHAIN_NAME;
  const tokens = config.CHAIN_TOKENS[chain] ?? {};
  const pool = rpcPool(
    config.chainRpcUrls,
    { chain, quorum: config.CHAIN_RPC_QUORUM, timeoutMs: config.CHAIN_RPC_TIMEOUT_MS },
    metrics,
    logger,
  );
  const scanner = new TransferScanner(
    pool,
    chainWatchStore(db),
    { chain, tokens, batchBlocks: config.CHAIN_SCAN_BLOCKS },
    logger,
  );
  const watcher = new ChainWatcher(
    pool,
    transactionStore(db),
    transactions,
    {
      chain,
      tokens,
      finality: config.chainFinality,
      dropTimeoutMs: config.CHAIN_DROP_TIMEOUT_SECONDS * 1000,
      intervalMs: config.CHAIN_POLL_INTERVAL_MS,
      scanner,
    },
    logger,
  );
  metrics.watch(chain, () => watcher.lag());
  watcher.start();
  logger.info('chain watcher started', {
    chain,
    finality: String(config.chainFinality),
    tokens: Object.keys(tokens).join(','),
    rpcs: pool.endpoints.map((e) => e.label).join(' '),
    quorum: config.CHAIN_RPC_QUORUM,
  });
  return {
    watcher,
    readiness: watcher.readinessCheck(config.CHAIN_MAX_LAG_BLOCKS),
    finalTransactions: new FinalTransactionReader(pool, { chain, tokens, finality: config.chainFinality }),
  };
}
