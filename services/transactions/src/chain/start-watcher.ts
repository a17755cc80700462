import { createPublicClient, http, webSocket, type PublicClient } from 'viem';
import type { Db, Logger } from '@attest/common';
import type { TransactionsConfig } from '../config';
import type { TransactionService } from '../domain/transactions';
import { transactionStore } from '../store/transaction-store';
import { ChainWatcher } from './chain-watcher';

export function chainClient(url: string): PublicClient {
  const transport = url.startsWith('ws')
    ? webSocket(url, { timeout: 10000 })
    : http(url, { timeout: 10000, retryCount: 2 });
  // cacheTime 0: each pass must see the current head, not one cached for seconds.
  return createPublicClient({ transport, cacheTime: 0 }) as PublicClient;
}

export async function startChainWatcher(
  config: TransactionsConfig,
  db: Db,
  transactions: TransactionService,
  logger: Logger,
): Promise<ChainWatcher> {
  const watcher = new ChainWatcher(
    chainClient(config.CHAIN_RPC_URL!),
    transactionStore(db),
    transactions,
    {
      chain: config.CHAIN_NAME,
      tokens: config.CHAIN_TOKENS[config.CHAIN_NAME] ?? {},
      finality: config.chainFinality,
      dropTimeoutMs: config.CHAIN_DROP_TIMEOUT_SECONDS * 1000,
      intervalMs: config.CHAIN_POLL_INTERVAL_MS,
    },
    logger,
  );
  watcher.start();
  logger.info('chain watcher started', {
    chain: config.CHAIN_NAME,
    finality: String(config.chainFinality),
    tokens: Object.keys(config.CHAIN_TOKENS[config.CHAIN_NAME] ?? {}).join(','),
  });
  return watcher;
}
