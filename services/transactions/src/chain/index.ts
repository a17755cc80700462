/**
 * The chain watcher: verifies recorded payments on an EVM chain (RPC pool with quorum, final blocks
 * only) and scans final blocks for transfers to watched addresses. Needs the transactions feature.
 * viem is loaded with the watcher, only when a chain is configured (it costs about 12 MB of memory):
 * nothing here imports it until startChainWatcher is called.
 */
export { ChainMetrics } from './chain-metrics';
export type { Finality } from './verify-transfer';
export type { ChainWatcherConfig, StartedChainWatcher } from './start-watcher';

/** Starts the watcher (see start-watcher.ts), loading viem with it. */
export const startChainWatcher: (typeof import('./start-watcher'))['startChainWatcher'] = async (...args) =>
  (await import('./start-watcher')).startChainWatcher(...args);
