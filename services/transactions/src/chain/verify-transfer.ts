import { sameAmount, SPEC_DECIMALS, type TokenConfig } from '../kernel/chain-tokens';

/** Why the chain watcher failed a transaction; shown in the status history and the lookup's header. */
export type FailureReason =
  | 'reverted'
  | 'wrong_token'
  | 'wrong_recipient'
  | 'wrong_sender'
  | 'wrong_amount'
  | 'unknown_token'
  | 'dropped'
  | 'already_claimed';

export interface StatusReason {
  code: FailureReason;
  /** A sentence for the operator: what was recorded, what the chain holds. */
  detail: string;
}

/** What the app recorded (SPEC 2.5 fields). */
export interface RecordedTransfer {
  from: string;
  to: string;
  token: string;
  tokenAmount: string;
}

export interface ChainLog {
  address: string;
  topics: readonly string[];
  data: string;
  /** Its position in the block (the receipt's logs have it). */
  logIndex?: number | null;
}

/** A final receipt, and for native tokens the transaction itself. */
export interface ObservedTransaction {
  status: 'success' | 'reverted';
  logs: readonly ChainLog[];
  transaction?: { from: string; to: string | null; value: bigint };
}

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

interface Transfer {
  contract: string;
  from: string;
  to: string;
  value: bigint;
  logIndex: number | null;
}

const lower = (address: string) => address.toLowerCase();
const topicAddress = (topic: string) => `0x${topic.slice(26)}`.toLowerCase();

/** ERC-20 Transfer logs (three topics, a 32-byte value); anything else is skipped. */
export function transfersIn(logs: readonly ChainLog[]): Transfer[] {
  return logs
    .filter((l) => l.topics.length === 3 && lower(l.topics[0]) === TRANSFER_TOPIC && /^0x[0-9a-fA-F]{64}$/.test(l.data))
    .map((l) => ({
      contract: lower(l.address),
      from: topicAddress(l.topics[1]),
      to: topicAddress(l.topics[2]),
      value: BigInt(l.data),
      logIndex: l.logIndex ?? null,
    }));
}

/** The ERC-20 Transfer log that pays what was recorded (the first that does), or undefined. */
function payingTransfer(
  recorded: RecordedTransfer,
  token: Extract<TokenConfig, { kind: 'erc20' }>,
  logs: readonly ChainLog[],
): Transfer | undefined {
  const [from, to, amount] = [lower(recorded.from), lower(recorded.to), BigInt(recorded.tokenAmount)];
  return transfersIn(logs).find(
    (t) =>
      t.contract === lower(token.address) &&
      t.from === from &&
      t.to === to &&
      sameAmount(amount, t.value, token.decimals),
  );
}

/** The log index of the Transfer that pays a recorded ERC-20 payment (null for a native token, or when none does). */
export function payingLogIndex(
  recorded: RecordedTransfer,
  token: TokenConfig | undefined,
  logs: readonly ChainLog[],
): number | null {
  return token?.kind === 'erc20' ? (payingTransfer(recorded, token, logs)?.logIndex ?? null) : null;
}

/**
 * For a payment of a payment request, where the chain's amount counts whatever token_amount says: the
 * first transfer of the token from `from` to `to` (an ERC-20 Transfer log, or the native value), as a
 * 6-decimal amount (rounded down below 10^-6), or null when the transaction holds none (then
 * verifyTransfer says why). A reverted transaction moved nothing.
 */
export function receivedTransfer(
  recorded: Pick<RecordedTransfer, 'from' | 'to'>,
  token: TokenConfig | undefined,
  observed: ObservedTransaction,
): { amount: bigint; logIndex: number | null } | null {
  if (observed.status !== 'success' || !token) return null;
  const scale = (value: bigint) => (value * 10n ** BigInt(SPEC_DECIMALS)) / 10n ** BigInt(token.decimals);
  if (token.kind === 'native') {
    const tx = observed.transaction;
    if (!tx || lower(tx.to ?? '') !== lower(recorded.to) || lower(tx.from) !== lower(recorded.from)) return null;
    return tx.value > 0n ? { amount: scale(tx.value), logIndex: null } : null;
  }
  const transfer = transfersIn(observed.logs).find(
    (t) =>
      t.contract === lower(token.address) &&
      t.from === lower(recorded.from) &&
      t.to === lower(recorded.to) &&
      t.value > 0n,
  );
  return transfer ? { amount: scale(transfer.value), logIndex: transfer.logIndex } : null;
}

const fail = (code: FailureReason, detail: string): StatusReason => ({ code, detail });

function verifyErc20(
  recorded: RecordedTransfer,
  token: Extract<TokenConfig, { kind: 'erc20' }>,
  logs: readonly ChainLog[],
): StatusReason | null {
  const [from, to, amount] = [lower(recorded.from), lower(recorded.to), BigInt(recorded.tokenAmount)];
  const all = transfersIn(logs);
  const ofToken = all.filter((t) => t.contract === lower(token.address));
  const between = ofToken.filter((t) => t.from === from && t.to === to);
  if (between.some((t) => sameAmount(amount, t.value, token.decimals))) return null;
  const what = `${recorded.token} (${token.address})`;
  if (between.length > 0)
    return fail(
      'wrong_amount',
      `Transferred ${between.map((t) => t.value).join(', ')} base units of ${what} (${token.decimals} decimals); recorded token_amount ${recorded.tokenAmount} (6 decimals).`,
    );
  if (all.some((t) => t.from === from && t.to === to))
    return fail('wrong_token', `The transfer from ${recorded.from} to ${recorded.to} is not of ${what}.`);
  if (ofToken.some((t) => t.from === from))
    return fail(
      'wrong_recipient',
      `${what} went from ${recorded.from} to ${ofToken.find((t) => t.from === from)!.to}, not to ${recorded.to}.`,
    );
  if (ofToken.some((t) => t.to === to))
    return fail(
      'wrong_sender',
      `${what} came to ${recorded.to} from ${ofToken.find((t) => t.to === to)!.from}, not from ${recorded.from}.`,
    );
  if (ofToken.length > 0)
    return fail(
      'wrong_recipient',
      `No transfer of ${what} from ${recorded.from} to ${recorded.to} in this transaction.`,
    );
  return fail('wrong_token', `No transfer of ${what} in this transaction.`);
}

function verifyNative(
  recorded: RecordedTransfer,
  decimals: number,
  observed: ObservedTransaction,
): StatusReason | null {
  const tx = observed.transaction;
  if (!tx) throw new Error('a native transfer is verified from its transaction');
  if (lower(tx.to ?? '') !== lower(recorded.to)) {
    const tokenMoved = transfersIn(observed.logs).some(
      (t) => t.from === lower(recorded.from) && t.to === lower(recorded.to),
    );
    if (tokenMoved)
      return fail(
        'wrong_token',
        `The transfer from ${recorded.from} to ${recorded.to} is of a token contract, not native ${recorded.token}.`,
      );
    return fail(
      'wrong_recipient',
      `The transaction went to ${tx.to ?? 'no address (a contract creation)'}, not to ${recorded.to}.`,
    );
  }
  if (lower(tx.from) !== lower(recorded.from))
    return fail('wrong_sender', `The transaction came from ${tx.from}, not from ${recorded.from}.`);
  if (!sameAmount(BigInt(recorded.tokenAmount), tx.value, decimals))
    return fail(
      'wrong_amount',
      `Transferred ${tx.value} base units of native ${recorded.token} (${decimals} decimals); recorded token_amount ${recorded.tokenAmount} (6 decimals).`,
    );
  return null;
}

/**
 * Does a final transaction pay what was recorded? Null when it does: the receipt succeeded and it holds
 * an ERC-20 `Transfer` of the configured contract from `from` to `to` of exactly `token_amount`
 * (or, for a native token, the transaction itself moves that value from `from` to `to`).
 */
export function verifyTransfer(
  recorded: RecordedTransfer,
  token: TokenConfig | undefined,
  observed: ObservedTransaction,
): StatusReason | null {
  if (observed.status !== 'success') return fail('reverted', 'The transaction reverted on chain.');
  if (!token)
    return fail('unknown_token', `No contract is configured for token ${recorded.token} on this chain (CHAIN_TOKENS).`);
  return token.kind === 'native'
    ? verifyNative(recorded, token.decimals, observed)
    : verifyErc20(recorded, token, observed.logs);
}

export type Finality = number | 'safe' | 'finalized';

/** The highest block number that is final, given the head (confirmations) or the node's tagged block. */
export function lastFinalBlock(finality: Finality, head: bigint, taggedBlock?: bigint): bigint {
  if (typeof finality === 'number') return head - BigInt(finality) + 1n;
  if (taggedBlock === undefined) throw new Error(`the ${finality} block is needed`);
  return taggedBlock;
}
