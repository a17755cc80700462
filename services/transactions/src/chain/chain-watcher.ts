import { TransactionNotFoundError, TransactionReceiptNotFoundError, type Hash, type PublicClient } from 'viem';
import type { Logger } from '@attest/common';
import type { TransactionService } from '../domain/transactions';
import type { TransactionStore } from '../store/transaction-store';

export interface ChainWatcherOptions {
  /** Only transactions recorded with this chain name are watched. */
  chain: string;
  confirmations: number;
  dropTimeoutMs: number;
  intervalMs: number;
  batchSize?: number;
  leaseMs?: number;
}

export type Outcome = 'mined' | 'failed' | 'dropped' | 'waiting' | 'error';

/**
 * Polls an EVM JSON-RPC node for pending transactions that have a hash: a receipt with status 1 and
 * enough confirmations → mined; status 0 → failed; never seen after the drop timeout → failed.
 * Rows are leased with SKIP LOCKED, so several replicas never check the same transaction at once.
 */
export class ChainWatcher {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly client: PublicClient,
    private readonly store: TransactionStore,
    private readonly transactions: TransactionService,
    private readonly options: ChainWatcherOptions,
    private readonly logger: Logger,
  ) {}

  /** One pass; returns what happened to each leased transaction. */
  async tick(): Promise<Record<string, Outcome>> {
    const leased = await this.store.leasePending(this.options.chain, this.options.batchSize ?? 50, this.options.leaseMs ?? 60000);
    const outcomes: Record<string, Outcome> = {};
    if (leased.length === 0) return outcomes;
    const head = await this.client.getBlockNumber();
    for (const { transaction, ageMs } of leased) {
      try {
        outcomes[transaction.id] = await this.check(transaction.id, transaction.transactionHash as Hash, ageMs, head);
      } catch (err) {
        outcomes[transaction.id] = 'error';
        this.logger.warn('chain check failed', { transaction_id: transaction.id, error: (err as Error).message });
      }
      if (outcomes[transaction.id] === 'waiting' || outcomes[transaction.id] === 'error') await this.store.releaseLease(transaction.id);
    }
    return outcomes;
  }

  private async check(id: string, hash: Hash, ageMs: number, head: bigint): Promise<Outcome> {
    const receipt = await this.client.getTransactionReceipt({ hash }).catch((err: unknown) => {
      if (err instanceof TransactionReceiptNotFoundError) return null;
      throw err;
    });
    if (receipt) {
      if (head - receipt.blockNumber + 1n < BigInt(this.options.confirmations)) return 'waiting';
      const status = receipt.status === 'success' ? 'mined' : 'failed';
      await this.transactions.transition(id, status, `chain:${receipt.status}@${receipt.blockNumber}`);
      return status;
    }
    const seen = await this.client.getTransaction({ hash }).catch((err: unknown) => {
      if (err instanceof TransactionNotFoundError) return null;
      throw err;
    });
    if (!seen && ageMs > this.options.dropTimeoutMs) {
      await this.transactions.transition(id, 'failed', 'chain:dropped');
      return 'dropped';
    }
    return 'waiting';
  }

  start(): void {
    const loop = () => {
      this.running = this.tick().catch((err: Error) => this.logger.warn('chain watcher pass failed', { error: err.message }));
      // running never rejects (failures are logged above); the next pass is scheduled once it settles
      void this.running.then(() => {
        if (this.timer) this.timer = setTimeout(loop, this.options.intervalMs);
      });
    };
    this.timer = setTimeout(loop, 0);
  }

  async stop(): Promise<void> {
    const timer = this.timer;
    this.timer = undefined;
    if (timer) clearTimeout(timer);
    await this.running;
  }
}
