import { TransactionNotFoundError, TransactionReceiptNotFoundError, type Hash, type TransactionReceipt } from 'viem';
import type { Logger, ReadinessCheck } from '@attest/common';
import type { TokenConfig } from '../kernel/chain-tokens';
import type { Transaction } from '../kernel/transaction';
import {
  ALREADY_CLAIMED,
  type LeasedTransaction,
  type TransactionService,
  type TransactionStore,
} from '../transactions';
import type { WatchLag } from './chain-metrics';
import { rpcErrorMessage, type RpcPool } from './rpc-pool';
import type { TransferScanner } from './transfer-scanner';
import {
  lastFinalBlock,
  payingLogIndex,
  receivedTransfer,
  verifyTransfer,
  type Finality,
  type StatusReason,
} from './verify-transfer';

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
  /** Scans final blocks for transfers after each pass, from the stored cursor. */
  scanner?: TransferScanner;
}

/** undecided: the RPC quorum did not agree on the receipt's block; checked again next pass. */
export type Outcome = 'mined' | 'failed' | 'dropped' | 'waiting' | 'reorged' | 'undecided' | 'error';

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
    private readonly pool: RpcPool,
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
    if (leased.length === 0) {
      // nothing to check here (or another replica holds it): the head is still noted while something is
      // not final, so the confirmations a payment request shows keep rising until it is
      if (await this.transactions.awaitingFinality(this.options.chain)) await this.noteHead();
      return outcomes;
    }
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
        this.logger.warn('chain check failed', { transaction_id: id, error: rpcErrorMessage(err) });
      }
      if (['waiting', 'reorged', 'undecided', 'error'].includes(outcomes[id])) await this.store.releaseLease(id);
    }
    return outcomes;
  }

  /**
   * The last final block, as the RPC quorum sees it (the lowest of their answers); from `head` when given,
   * else the head is read and noted on the way (the confirmations payment requests show).
   */
  private async lastFinalBlock(head?: bigint): Promise<bigint> {
    const { finality } = this.options;
    if (head === undefined) head = await this.noteHead();
    if (typeof finality === 'number') return lastFinalBlock(finality, head);
    const tagged = await this.pool.lowest('eth_getBlockByNumber', async (c) => {
      const block = await c.getBlock({ blockTag: finality });
      if (block.number === null) throw new Error(`the RPC has no ${finality} block`);
      return block.number;
    });
    return lastFinalBlock(finality, 0n, tagged);
  }

  /** Reads the head (the lowest of the RPC quorum's) and notes it: the confirmations payment requests show. */
  private async noteHead(): Promise<bigint> {
    const head = await this.pool.lowest('eth_blockNumber', (c) => c.getBlockNumber());
    await this.transactions.noteHead(this.options.chain, head);
    return head;
  }

  /**
   * Scans the final blocks not scanned yet (from the stored cursor), when a scanner is configured, and
   * attaches the transfers it kept to the payment requests they pay.
   */
  async scan(): Promise<void> {
    const { scanner, chain, tokens } = this.options;
    if (!scanner) return;
    await scanner.scan(await this.lastFinalBlock());
    await scanner.fillBlockTimes();
    const decimals = Object.fromEntries(Object.entries(tokens).map(([code, t]) => [code, t.decimals]));
    for (const done of await this.transactions.attachScanned(chain, decimals)) {
      const { transfer } = done;
      const where = { transaction_hash: transfer.transactionHash, log_index: transfer.logIndex, to: transfer.to };
      if (done.outcome === 'attached')
        this.logger.info('chain watcher: a transfer nobody recorded pays a payment request', {
          ...where,
          payment_request_id: done.paymentRequestId,
          transaction_id: done.transactionId,
        });
      else if (done.outcome === 'ambiguous')
        this.logger.warn(
          'chain watcher: a transfer nobody recorded could pay several payment requests, none owed exactly its amount; not counted',
          { ...where, token: transfer.token, value: transfer.value.toString() },
        );
    }
  }

  /** How far the scan is behind the chain's final block, read now (so a stopped watcher shows it too). */
  async lag(): Promise<WatchLag> {
    const processed = await this.options.scanner?.processedBlock();
    if (processed === undefined || processed === null) throw new Error('the chain has not been scanned yet');
    const head = await this.pool.call('eth_blockNumber', (c) => c.getBlockNumber());
    const final = await this.lastFinalBlock(head);
    const lag = final > processed ? final - processed : 0n;
    return {
      head_block: Number(head),
      final_block: Number(final),
      processed_block: Number(processed),
      lag_blocks: Number(lag),
    };
  }

  /**
   * The `chain` check of /readyz: degraded when the scan is more than maxLagBlocks final blocks behind,
   * unavailable when no RPC answers; either way with the numbers and each RPC's state as detail.
   */
  readinessCheck(maxLagBlocks: number): ReadinessCheck {
    return {
      name: 'chain',
      check: async () => {
        const lag = await this.lag().catch((err: unknown) => err as Error);
        // counts only: /readyz is public, the RPC hosts are not (per-RPC state is on the admin port's /metrics)
        const state = this.pool.state();
        const rpcs = { rpcs: state.length, rpcs_up: state.filter((r) => r.up).length, max_lag_blocks: maxLagBlocks };
        if (lag instanceof Error) return { status: 'unavailable', detail: { error: rpcErrorMessage(lag), ...rpcs } };
        return { status: lag.lag_blocks > maxLagBlocks ? 'degraded' : 'ok', detail: { ...lag, ...rpcs } };
      },
    };
  }

  private async check(
    { transaction, ageMs, seenBlockHash, paymentRequestId }: LeasedTransaction,
    finalBlock: bigint,
  ): Promise<Outcome> {
    const hash = transaction.transactionHash as Hash;
    const receipt = await this.pool.call('eth_getTransactionReceipt', (c) =>
      c.getTransactionReceipt({ hash }).catch(orNull<TransactionReceipt>(TransactionReceiptNotFoundError)),
    );
    if (!receipt) {
      if (seenBlockHash) return this.reorganised(transaction, seenBlockHash, null);
      const seen = await this.pool.call('eth_getTransactionByHash', (c) =>
        c.getTransaction({ hash }).catch(orNull(TransactionNotFoundError)),
      );
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
      await this.transactions.noteBlock(transaction.id, receipt.blockNumber, receipt.blockHash);
      if (seenBlockHash) this.logReorg(transaction, seenBlockHash, receipt.blockHash);
      // a payment request's payment in a block that is not final yet: the request is detected (again, in
      // its new block, when a reorganisation moved it)
      if (paymentRequestId && receipt.blockNumber > finalBlock)
        await this.transactions.detected(transaction.id, receipt.blockNumber, seenBlockHash ?? undefined);
    }
    if (receipt.blockNumber > finalBlock)
      return seenBlockHash && receipt.blockHash !== seenBlockHash ? 'reorged' : 'waiting';
    // the receipt and the final block were read at different moments: make sure its block is still the
    // chain's, as the RPC quorum sees it (CHAIN_RPC_QUORUM RPCs return the same hash)
    const { verdict, timestamp } = await this.pool.verifyBlock(receipt.blockNumber, receipt.blockHash);
    if (verdict === 'reorged') return this.reorganised(transaction, receipt.blockHash, null);
    if (verdict === 'disagreed') return 'undecided';
    const blockTime = new Date(Number(timestamp) * 1000);
    return this.decide(transaction, receipt, paymentRequestId ? blockTime : undefined);
  }

  /** `requestBlockTime` is given for a payment of a payment request: the amount the chain moved counts. */
  private async decide(
    transaction: Transaction,
    receipt: TransactionReceipt,
    requestBlockTime?: Date,
  ): Promise<Outcome> {
    const token = this.options.tokens[transaction.token];
    const native = token?.kind === 'native' && receipt.status === 'success';
    const sent = native
      ? await this.pool.call('eth_getTransactionByHash', (c) => c.getTransaction({ hash: receipt.transactionHash }))
      : undefined;
    const observed = {
      status: receipt.status,
      logs: receipt.logs,
      transaction: sent && { from: sent.from, to: sent.to, value: sent.value },
    };
    const received = requestBlockTime ? receivedTransfer(transaction, token, observed) : null;
    const reason = received ? null : verifyTransfer(transaction, token, observed);
    const source = `chain:${receipt.status}@${receipt.blockNumber}`;
    // a payment the chain holds claims its transaction; one another payment claimed first is failed (already_claimed)
    const { transaction: settled } = await this.transactions.transition(
      transaction.id,
      reason ? 'failed' : 'mined',
      source,
      reason,
      undefined,
      received
        ? {
            logIndex: received.logIndex,
            failWhenClaimed: true,
            observed: { amountReceived: received.amount, blockTime: requestBlockTime },
          }
        : {
            logIndex: reason ? null : payingLogIndex(transaction, token, receipt.logs),
            failWhenClaimed: true,
            observed: { blockTime: requestBlockTime },
          },
    );
    if (settled.status === 'failed')
      this.logger.info('chain watcher failed a transaction', {
        transaction_id: transaction.id,
        reason: settled.statusReason,
        detail: reason?.detail ?? ALREADY_CLAIMED.detail,
      });
    return settled.status === 'mined' ? 'mined' : 'failed';
  }

  /** The block it was seen in is gone: it is in no block now, and a payment request it made detected is pending again. */
  private async reorganised(transaction: Transaction, seenBlockHash: string, now: string | null): Promise<Outcome> {
    await this.transactions.reorganised(transaction.id, seenBlockHash);
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
      this.running = this.tick()
        .catch((err: unknown) => this.logger.warn('chain watcher pass failed', { error: rpcErrorMessage(err) }))
        .then(() => this.scan())
        .catch((err: unknown) => this.logger.warn('chain watcher scan failed', { error: rpcErrorMessage(err) }));
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
