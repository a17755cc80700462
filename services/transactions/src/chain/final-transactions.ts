import { TransactionNotFoundError, TransactionReceiptNotFoundError, type Hash, type TransactionReceipt } from 'viem';
import { SPEC_DECIMALS, type TokenConfig } from '../kernel/chain-tokens';
import type { FinalTransaction, FinalTransactions, FinalTransferLog } from '../kernel/chain-transfer';
import type { RpcPool } from './rpc-pool';
import { lastFinalBlock, transfersIn, type Finality } from './verify-transfer';

const notFound =
  <T>(kind: new (...args: never[]) => Error) =>
  (err: unknown): T | null => {
    if (err instanceof kind) return null;
    throw err;
  };

/**
 * Reads a transaction as the chain watcher decides payments: only in a final block (CHAIN_FINALITY), whose
 * hash CHAIN_RPC_QUORUM RPCs agree on; with the transfers of the configured tokens it holds (ERC-20 Transfer
 * logs, or the native value). Used to verify a refund when it is recorded.
 */
export class FinalTransactionReader implements FinalTransactions {
  constructor(
    private readonly pool: RpcPool,
    private readonly options: { chain: string; tokens: Readonly<Record<string, TokenConfig>>; finality: Finality },
  ) {}

  get chain(): string {
    return this.options.chain;
  }

  private async finalBlock(): Promise<bigint> {
    const { finality } = this.options;
    if (typeof finality === 'number')
      return lastFinalBlock(finality, await this.pool.lowest('eth_blockNumber', (c) => c.getBlockNumber()));
    const tagged = await this.pool.lowest('eth_getBlockByNumber', async (c) => {
      const block = await c.getBlock({ blockTag: finality });
      if (block.number === null) throw new Error(`the RPC has no ${finality} block`);
      return block.number;
    });
    return lastFinalBlock(finality, 0n, tagged);
  }

  async read(transactionHash: string): Promise<FinalTransaction> {
    const hash = transactionHash as Hash;
    const receipt = await this.pool.call('eth_getTransactionReceipt', (c) =>
      c.getTransactionReceipt({ hash }).catch(notFound<TransactionReceipt>(TransactionReceiptNotFoundError)),
    );
    if (!receipt) {
      const sent = await this.pool.call('eth_getTransactionByHash', (c) =>
        c.getTransaction({ hash }).catch(notFound(TransactionNotFoundError)),
      );
      return sent
        ? { state: 'not_final', blockNumber: null, finalBlock: await this.finalBlock() }
        : { state: 'unknown' };
    }
    const finalBlock = await this.finalBlock();
    if (receipt.blockNumber > finalBlock) return { state: 'not_final', blockNumber: receipt.blockNumber, finalBlock };
    const { verdict, timestamp } = await this.pool.verifyBlock(receipt.blockNumber, receipt.blockHash);
    if (verdict !== 'agreed') return { state: 'not_final', blockNumber: null, finalBlock };
    if (receipt.status !== 'success') return { state: 'reverted', blockNumber: receipt.blockNumber };
    return {
      state: 'final',
      blockNumber: receipt.blockNumber,
      blockTime: new Date(Number(timestamp) * 1000),
      transfers: await this.transfers(receipt),
    };
  }

  /** The transfers of configured tokens the receipt holds, in log order (the native value first). */
  private async transfers(receipt: TransactionReceipt): Promise<FinalTransferLog[]> {
    const tokens = Object.entries(this.options.tokens);
    const scale = (value: bigint, decimals: number) => (value * 10n ** BigInt(SPEC_DECIMALS)) / 10n ** BigInt(decimals);
    const found: FinalTransferLog[] = [];
    const native = tokens.find(([, t]) => t.kind === 'native');
    if (native) {
      const sent = await this.pool.call('eth_getTransactionByHash', (c) =>
        c.getTransaction({ hash: receipt.transactionHash }),
      );
      if (sent.value > 0n && sent.to)
        found.push({
          token: native[0],
          from: sent.from.toLowerCase(),
          to: sent.to.toLowerCase(),
          value: sent.value,
          amount: scale(sent.value, native[1].decimals),
          logIndex: null,
        });
    }
    for (const t of transfersIn(receipt.logs)) {
      const match = tokens.find(([, c]) => c.kind === 'erc20' && c.address.toLowerCase() === t.contract);
      if (match)
        found.push({
          token: match[0],
          from: t.from,
          to: t.to,
          value: t.value,
          amount: scale(t.value, match[1].decimals),
          logIndex: t.logIndex,
        });
    }
    return found;
  }
}
