import { parseAbiItem } from 'viem';
import type { Logger } from '@attest/common';
import type { ObservedTransfer } from '../kernel/chain-transfer';
import type { ChainWatchStore } from './chain-watch-store';
import type { TokenConfig } from '../kernel/chain-tokens';
import type { RpcPool } from './rpc-pool';

const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

export interface TransferScannerOptions {
  chain: string;
  tokens: Readonly<Record<string, TokenConfig>>;
  /** Blocks per eth_getLogs request. */
  batchBlocks: number;
  /** Requests per pass, so one pass after a long outage does not hold the loop for ever. */
  maxBatchesPerPass?: number;
}

export interface ScanResult {
  /** The last block scanned after this pass. */
  processed: bigint;
  /** Transfers to watched addresses kept in this pass. */
  transfers: number;
}

/**
 * Reads the ERC-20 Transfer logs of the configured tokens from the chain's final blocks, in ranges of
 * `batchBlocks`, from the block after the stored cursor; keeps the transfers to watched addresses and
 * moves the cursor in one transaction. A restart resumes at the cursor, so no final block is skipped. The
 * first scan of a chain starts at its final block then. Native transfers have no log and are not scanned.
 */
export class TransferScanner {
  private readonly contracts: { token: string; address: `0x${string}` }[];

  constructor(
    private readonly pool: RpcPool,
    private readonly store: ChainWatchStore,
    private readonly options: TransferScannerOptions,
    private readonly logger: Logger,
  ) {
    this.contracts = Object.entries(options.tokens).flatMap(([token, config]) =>
      config.kind === 'erc20' ? [{ token, address: config.address.toLowerCase() as `0x${string}` }] : [],
    );
  }

  /** The last block scanned, or null before the first pass. */
  processedBlock(): Promise<bigint | null> {
    return this.store.processedBlock(this.options.chain);
  }

  async scan(finalBlock: bigint): Promise<ScanResult> {
    const { chain, batchBlocks, maxBatchesPerPass = 20 } = this.options;
    let processed = (await this.store.processedBlock(chain)) ?? (await this.begin(finalBlock));
    let transfers = 0;
    for (let batch = 0; batch < maxBatchesPerPass && processed < finalBlock; batch++) {
      const from = processed + 1n;
      const to = from + BigInt(batchBlocks) - 1n < finalBlock ? from + BigInt(batchBlocks) - 1n : finalBlock;
      const found = await this.watched(await this.transfersIn(from, to));
      const times = await this.confirmed(found);
      if (!times) break;
      for (const t of found) t.blockTime = times.get(t.blockHash);
      if (!(await this.store.advance(chain, processed, to, found))) {
        // another replica scanned this range: carry on from where it got
        processed = (await this.store.processedBlock(chain))!;
        continue;
      }
      processed = to;
      transfers += found.length;
    }
    return { processed, transfers };
  }

  private async begin(finalBlock: bigint): Promise<bigint> {
    const start = await this.store.begin(this.options.chain, finalBlock);
    this.logger.info('chain watcher: first scan of this chain; transfers are scanned from the block after', {
      chain: this.options.chain,
      block: start.toString(),
    });
    return start;
  }

  private async transfersIn(fromBlock: bigint, toBlock: bigint): Promise<ObservedTransfer[]> {
    if (this.contracts.length === 0) return [];
    const logs = await this.pool.call('eth_getLogs', (client) =>
      client.getLogs({ address: this.contracts.map((c) => c.address), event: TRANSFER_EVENT, fromBlock, toBlock }),
    );
    return logs.flatMap((log) => {
      const contract = this.contracts.find((c) => c.address === log.address.toLowerCase());
      const { from, to, value } = log.args;
      if (!contract || !from || !to || value === undefined || log.blockNumber === null || log.blockHash === null)
        return [];
      if (log.transactionHash === null || log.logIndex === null) return [];
      return [
        {
          transactionHash: log.transactionHash,
          logIndex: log.logIndex,
          blockNumber: log.blockNumber,
          blockHash: log.blockHash,
          token: contract.token,
          contract: contract.address,
          from: from.toLowerCase(),
          to: to.toLowerCase(),
          value,
        },
      ];
    });
  }

  private async watched(transfers: ObservedTransfer[]): Promise<ObservedTransfer[]> {
    if (transfers.length === 0) return transfers;
    const watched = await this.store.watchedAmong(this.options.chain, [...new Set(transfers.map((t) => t.to))]);
    return transfers.filter((t) => watched.has(t.to));
  }

  /**
   * The blocks holding the transfers must be confirmed by the RPC quorum; otherwise (null) the range waits
   * for the next pass. Each block's time, by hash.
   */
  private async confirmed(transfers: readonly ObservedTransfer[]): Promise<Map<string, Date> | null> {
    const blocks = new Map(transfers.map((t) => [t.blockNumber, t.blockHash]));
    const times = new Map<string, Date>();
    for (const [number, hash] of blocks) {
      const { verdict, timestamp } = await this.pool.verifyBlock(number, hash);
      if (verdict === 'agreed' && timestamp !== undefined) times.set(hash, new Date(Number(timestamp) * 1000));
      if (verdict !== 'agreed') {
        this.logger.warn(
          'chain watcher: a scanned block is not confirmed by the RPC quorum; scanning it again next pass',
          {
            chain: this.options.chain,
            block_number: number.toString(),
            verdict,
          },
        );
        return null;
      }
    }
    return times;
  }

  /**
   * Reads the time of the blocks of transfers kept before their time was (migration 012) and not attached
   * yet, up to `limit` blocks: a transfer is attached to a payment request only with its block's time.
   */
  async fillBlockTimes(limit = 20): Promise<void> {
    const { chain } = this.options;
    for (const block of await this.store.blocksWithoutTime(chain, limit)) {
      const { verdict, timestamp } = await this.pool.verifyBlock(block.number, block.hash);
      if (verdict === 'agreed' && timestamp !== undefined)
        await this.store.setBlockTime(chain, block.hash, new Date(Number(timestamp) * 1000));
    }
  }
}
