/** The transfers the chain watcher keeps (chain_transfers): written by the chain feature, attached to payments by the transactions feature. */

/** A token transfer seen in a final block (addresses lower case). */
export interface ObservedTransfer {
  transactionHash: string;
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  token: string;
  contract: string;
  from: string;
  to: string;
  value: bigint;
  /** The time of its block (from the block the RPC quorum confirmed); undefined when not read. */
  blockTime?: Date;
}

/** What the watcher made of a kept transfer (migration 012); null: not considered yet. */
export type TransferOutcome = 'attached' | 'recorded' | 'unmatched' | 'ambiguous';

export interface StoredTransfer extends ObservedTransfer {
  chain: string;
  outcome: TransferOutcome | null;
  /** An attached transfer: the request it pays, and the payment (transactions row) made for it. */
  paymentRequestId: string | null;
  transactionId: string | null;
}

export interface TransferRow {
  chain: string;
  transaction_hash: string;
  log_index: number;
  block_number: string;
  block_hash: string;
  token: string;
  contract: string;
  from_address: string;
  to_address: string;
  value: string;
  block_time: Date | null;
  outcome: TransferOutcome | null;
  payment_request_id: string | null;
  transaction_id: string | null;
}

export const toTransfer = (r: TransferRow): StoredTransfer => ({
  chain: r.chain,
  transactionHash: r.transaction_hash,
  logIndex: r.log_index,
  blockNumber: BigInt(r.block_number),
  blockHash: r.block_hash,
  token: r.token,
  contract: r.contract,
  from: r.from_address,
  to: r.to_address,
  value: BigInt(r.value),
  blockTime: r.block_time ?? undefined,
  outcome: r.outcome,
  paymentRequestId: r.payment_request_id,
  transactionId: r.transaction_id,
});

/** A value transfer in a final transaction: an ERC-20 Transfer log of a configured token, or the native value. */
export interface FinalTransferLog {
  /** The token code (CHAIN_TOKENS) it moved. */
  token: string;
  from: string;
  to: string;
  /** In the token's base units. */
  value: bigint;
  /** In 6 decimals (rounded down), as amounts are kept. */
  amount: bigint;
  /** The Transfer log's index; null for the native value. */
  logIndex: number | null;
}

/** What the chain holds for a transaction hash, decided on final blocks only (the watcher's finality and RPC quorum). */
export type FinalTransaction =
  | { state: 'unknown' }
  | { state: 'not_final'; blockNumber: bigint | null; finalBlock: bigint }
  | { state: 'reverted'; blockNumber: bigint }
  | { state: 'final'; blockNumber: bigint; blockTime: Date; transfers: FinalTransferLog[] };

/** Reads final transactions of one chain (the chain feature's; handed over by the composition root). */
export interface FinalTransactions {
  chain: string;
  read(transactionHash: string): Promise<FinalTransaction>;
}
