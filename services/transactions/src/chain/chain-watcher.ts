import {
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Hash,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import type { Logger } from '@attest/common';
import { ALREADY_CLAIMED, type TransactionService } from '../domain/transactions';
import type { LeasedTransaction, Transaction, TransactionStore } from '../store/transaction-store';
import type { TokenConfig } from './chain-tokens';
import { lastFinalBlock, payingLogIndex, verifyTransfer, type Finality, type StatusReason } from './verify-transfer';

export interface ChainWatcherOptions {
  /** Only transactions recorded with this chain name are watched. */
  chain: string;
  /** Token code → contract (or native) on this chain, from CHAIN_TOKENS. */
  tokens: Readonly<Record<string, TokenConfig>>;
  /** A number of confirmations, or the node's `safe` / `finalized` block. */
  finality: Finality;
  dropTimeoutMs: number;
  intervalMs: number;
  batchSize?: number;
  leaseMs?: number;
}

export type Outcome = 'mined' | 'failed' | 'dropped' | 'waiting' | 'reorged' | 'error';

const orNull =
  <T>(notFound: new (...args: never[]) => Error) =>
  (err: unknown): T | null => {
    if (err instanceof notFound) return null;
    throw err;
  };

/**
 * Polls an EVM JSON-RPC node for pending transactions that have a hash, and decides only on final
 * blocks: a successful receipt that pays what was recorded → mined; a reverted receipt or a transfer
 * that does not match (token, sender, recipient, amount) → failed with the reason; never seen after
 * the drop timeout → failed (dropped). A transaction seen in a block that is reorganised away before
 * it is final goes back to waiting and is checked again from scratch. Rows are leased with SKIP
 * LOCKED, so several replicas never check the same transaction at once.
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
    const leased = await this.store.leasePending(
      this.options.chain,
      this.options.batchSize ?? 50,
      this.options.leaseMs ?? 60000,
    );
    const outcomes: Record<string, Outcome> = {};
    if (leased.length === 0) return outcomes;
    let finalBlock: bigint;
    try {
      finalBlock = await this.lastFinalBlock();
    } catch (err) {
      await Promise.all(leased.map(({ transaction }) => this.store.releaseLease(transaction.id)));
      throw err;
    }
    for (const lease of leased) {
      const id = lease.transaction.id;
      try {
        outcomes[id] = await this.check(lease, finalBlock);
      } catch (err) {
        outcomes[id] = 'error';
        this.logger.warn('chain check failed', { transaction_id: id, error: (err as Error).message });
      }
      if (['waiting', 'reorged', 'error'].includes(outcomes[id])) await this.store.releaseLease(id);
    }
    return outcomes;
  }

  private async lastFinalBlock(): Promise<bigint> {
    const { finality } = this.options;
    if (typeof finality === 'number') return lastFinalBlock(finality, await this.client.getBlockNumber());
    const tagged = await this.client.getBlock({ blockTag: finality });
    return lastFinalBlock(finality, 0n, tagged.number ?? undefined);
  }

  private async check({ transaction, ageMs, seenBlockHash }: LeasedTransaction, finalBlock: bigint): Promise<Outcome> {
    const hash = transaction.transactionHash as Hash;
    const receipt = await this.client
      .getTransactionReceipt({ hash })
      .catch(orNull<TransactionReceipt>(TransactionReceiptNotFoundError));
    if (!receipt) {
      if (seenBlockHash) return this.reorganised(transaction, seenBlockHash, null);
      const seen = await this.client.getTransaction({ hash }).catch(orNull(TransactionNotFoundError));
      if (!seen && ageMs > this.options.dropTimeoutMs) {
        const reason: StatusReason = {
          code: 'dropped',
          detail: `The chain never included this transaction within ${Math.round(this.options.dropTimeoutMs / 1000)} s.`,
        };
        await this.transactions.transition(transaction.id, 'failed', 'chain:dropped', reason);
        return 'dropped';
      }
      return 'waiting';
    }
    if (receipt.blockHash !== seenBlockHash) {
      await this.store.noteBlock(transaction.id, receipt.blockNumber, receipt.blockHash);
      if (seenBlockHash) this.logReorg(transaction, seenBlockHash, receipt.blockHash);
    }
    if (receipt.blockNumber > finalBlock)
      return seenBlockHash && receipt.blockHash !== seenBlockHash ? 'reorged' : 'waiting';
    // the receipt and the final block were read at different moments: make sure its block is still the chain's
    const block = await this.client.getBlock({ blockNumber: receipt.blockNumber });
    if (block.hash !== receipt.blockHash) return this.reorganised(transaction, receipt.blockHash, null);
    return this.decide(transaction, receipt);
  }

  private async decide(transaction: Transaction, receipt: TransactionReceipt): Promise<Outcome> {
    const token = this.options.tokens[transaction.token];
    const native = token?.kind === 'native' && receipt.status === 'success';
    const sent = native ? await this.client.getTransaction({ hash: receipt.transactionHash }) : undefined;
    const reason = verifyTransfer(transaction, token, {
      status: receipt.status,
      logs: receipt.logs,
      transaction: sent && { from: sent.from, to: sent.to, value: sent.value },
    });
    const source = `chain:${receipt.status}@${receipt.blockNumber}`;
    // a payment the chain holds claims its transaction; one another payment claimed first is failed (already_claimed)
    const { transaction: settled } = await this.transactions.transition(
      transaction.id,
      reason ? 'failed' : 'mined',
      source,
      reason,
      undefined,
      { logIndex: reason ? null : payingLogIndex(transaction, token, receipt.logs), failWhenClaimed: true },
    );
    if (settled.status === 'failed')
      this.logger.info('chain watcher failed a transaction', {
        transaction_id: transaction.id,
        reason: settled.statusReason,
        detail: reason?.detail ?? ALREADY_CLAIMED.detail,
      });
    return settled.status === 'mined' ? 'mined' : 'failed';
  }

  private async reorganised(transaction: Transaction, seenBlockHash: string, now: string | null): Promise<Outcome> {
    await this.store.noteBlock(transaction.id, null, null);
    this.logReorg(transaction, seenBlockHash, now);
    return 'reorged';
  }

  private logReorg(transaction: Transaction, was: string, now: string | null): void {
    this.logger.warn('chain reorganisation: a pending transaction left the block it was seen in; checking it again', {
      transaction_id: transaction.id,
      seen_block: was,
      now_block: now,
    });
  }

  start(): void {
    const loop = () => {
      this.running = this.tick().catch((err: Error) =>
        this.logger.warn('chain watcher pass failed', { error: err.message }),
      );
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
