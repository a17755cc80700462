import type { Db, Logger, OutboundPolicy } from '@attest/common';
import type { Network, SupportedResponse } from '@x402/core/types';
import type { ChainTokens } from '../kernel/chain-tokens';
import type { PaymentRequestLookup } from '../kernel/settlement';
import type { TransactionService } from '../transactions';
import { HUMAN_EXTENSION, HumanProofs, IdentityKeys } from './human-proof';
import { batchedEthCall, clientEthCall } from './eth-calls';
import { relayerKey } from './relayer-key';
import { X402Settler } from './settle';
import { settlementStore } from './settlement-store';
import { X402Verifier, type ReceivingAddressCheck, type X402Token } from './verify';
import { Relayer, X402Chain, x402Client, x402Transport } from './x402-chain';
import { X402Metrics } from './x402-metrics';

/** The configuration x402 runs with (TransactionsConfig's CHAIN_* and X402_*). */
export interface X402Config {
  CHAIN_NAME: string;
  CHAIN_TOKENS: ChainTokens;
  chainRpcUrls: readonly string[];
  CHAIN_RPC_TIMEOUT_MS: number;
  /** The relayer's private key: sealed with KEY_ENCRYPTION_KEY (v1.…) or, discouraged, 0x-hex in clear. */
  X402_RELAYER_KEY?: string;
  X402_RELAYER_MIN_BALANCE: string;
  X402_SETTLEMENTS_PER_MINUTE: number;
  X402_MAX_AMOUNT?: string;
  X402_MIN_AMOUNT: string;
  X402_RECEIPT_TIMEOUT_SECONDS: number;
  keyEncryptionKey: string;
  /** The identity service whose delegated tokens prove the human behind an agent (attest-human); null: none. */
  x402Identity: { issuer: string; jwksUrl: string; policy: OutboundPolicy } | null;
}

export interface X402Facilitator {
  network: Network;
  verifier: X402Verifier;
  settler: X402Settler;
  supported: SupportedResponse;
  metrics: X402Metrics | null;
  relayer: Relayer | null;
}

export interface X402Deps {
  db: Db;
  transactions: Pick<TransactionService, 'recordOnce' | 'list'>;
  paymentRequests: PaymentRequestLookup;
  receiving: ReceivingAddressCheck;
  logger: Logger;
}

/**
 * Builds the facilitator on the configured chain: asks the RPC for its chain id (the CAIP-2 network is
 * eip155:<id>), takes CHAIN_TOKENS' ERC-20 tokens of CHAIN_NAME as the assets, and the relayer when
 * X402_RELAYER_KEY is set (without one, verify works and settle refuses).
 */
export async function buildX402Facilitator(config: X402Config, deps: X402Deps): Promise<X402Facilitator> {
  const transport = x402Transport(config.chainRpcUrls, config.CHAIN_RPC_TIMEOUT_MS);
  const client = x402Client(transport);
  const chainId = await client.getChainId();
  const network: Network = `eip155:${chainId}`;
  const tokens = new Map<string, X402Token>();
  for (const [code, token] of Object.entries(config.CHAIN_TOKENS[config.CHAIN_NAME] ?? {}))
    if (token.kind === 'erc20')
      tokens.set(token.address.toLowerCase(), { code, address: token.address, decimals: token.decimals });
  const settlements = settlementStore(deps.db);
  // verify's nonce and balance reads: batched here to the first RPC URL, viem's client for anything but a plain answer
  const reads = batchedEthCall(config.chainRpcUrls[0], config.CHAIN_RPC_TIMEOUT_MS, clientEthCall(client));
  const identity = config.x402Identity;
  const humans = identity
    ? new HumanProofs(new IdentityKeys(identity.jwksUrl, identity.policy, deps.logger), identity.issuer)
    : null;
  const verifier = new X402Verifier(
    { chain: new X402Chain(client, chainId, reads), receiving: deps.receiving, settlements, humans },
    {
      network,
      chainName: config.CHAIN_NAME,
      tokens,
      maxAmount: config.X402_MAX_AMOUNT === undefined ? undefined : BigInt(config.X402_MAX_AMOUNT),
      minAmount: BigInt(config.X402_MIN_AMOUNT),
    },
  );
  let relayer: Relayer | null = null;
  if (config.X402_RELAYER_KEY) {
    const key = relayerKey(config.X402_RELAYER_KEY, config.keyEncryptionKey);
    if (typeof key !== 'string') throw new Error(key.problem);
    relayer = new Relayer(client, transport, key, chainId, deps.db);
  }
  const metrics = relayer
    ? new X402Metrics(relayer.address, BigInt(config.X402_RELAYER_MIN_BALANCE), deps.logger)
    : null;
  const settler = new X402Settler(
    {
      verifier,
      relayer,
      settlements,
      transactions: deps.transactions,
      paymentRequests: deps.paymentRequests,
      metrics,
      logger: deps.logger,
    },
    {
      perMinute: config.X402_SETTLEMENTS_PER_MINUTE,
      receiptTimeoutMs: config.X402_RECEIPT_TIMEOUT_SECONDS * 1000,
      leaseMs: (config.X402_RECEIPT_TIMEOUT_SECONDS + 30) * 1000,
    },
  );
  const supported: SupportedResponse = {
    kinds: [{ x402Version: 2, scheme: 'exact', network }],
    extensions: ['payment-identifier', ...(humans ? [HUMAN_EXTENSION] : [])],
    signers: relayer ? { 'eip155:*': [relayer.address] } : {},
  };
  deps.logger.info('x402 facilitator ready', {
    network,
    tokens: [...tokens.values()].map((t) => t.code).join(','),
    relayer: relayer?.address ?? 'none',
  });
  return { network, verifier, settler, supported, metrics, relayer };
}
