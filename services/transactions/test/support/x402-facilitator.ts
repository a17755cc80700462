import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { x402ResourceServer } from '@x402/express';
import { encrypt } from '@attest/common';
import { ReceivingAddressService, signatureVerifier } from '../../src/receiving-addresses';
import { apiKeyFor, transactionsHarness, type TransactionsHarness } from '../support';
import { localChain, type LocalChain } from './local-chain';
import { deployX402Token, type X402Chain } from './x402';

export const KEY_ENCRYPTION_KEY = 'x402-test-key-encryption-key-0123456789abcdef';
const ETH = 10n ** 18n;

/** A facilitator on a local chain: the token, a relayer with gas, the service, and a seller app. */
export interface X402Facilitator {
  chain: LocalChain;
  x402: X402Chain;
  h: TransactionsHarness;
  /** The seller app's API key. */
  apiKey: string;
  relayerKey: Hex;
  relayer: Address;
  /** Adds receiving addresses to apps on the operator's word. */
  receiving: ReceivingAddressService;
}

/**
 * Starts ganache with the EIP-3009 test token, funds a relayer, starts the transactions service with that
 * relayer (sealed with KEY_ENCRYPTION_KEY) and `env`, and gives `appId` an API key and `sellers` as its
 * receiving addresses. The caller closes `h` and `chain`.
 */
export async function x402Facilitator(
  appId: string,
  sellers: Address[],
  env: NodeJS.ProcessEnv = {},
): Promise<X402Facilitator> {
  const relayerKey = generatePrivateKey();
  const relayer = privateKeyToAccount(relayerKey).address;
  const chain = await localChain();
  const x402 = await deployX402Token(chain);
  await x402.fund(relayer, ETH);
  const h = await transactionsHarness({
    CHAIN_RPC_URL: chain.url,
    CHAIN_TOKENS: JSON.stringify({ worldchain: { USDC: { address: x402.token, decimals: 6 } } }),
    CHAIN_FINALITY: '1',
    KEY_ENCRYPTION_KEY,
    X402_RELAYER_KEY: encrypt(KEY_ENCRYPTION_KEY, relayerKey),
    ...env,
  });
  const apiKey = (await apiKeyFor(h, appId)).api_key;
  const receiving = new ReceivingAddressService(h.storage.db, signatureVerifier({}));
  for (const seller of sellers)
    await receiving.addByOperator(appId, 'worldchain', seller, { type: 'operator', id: 'test' });
  return { chain, x402, h, apiKey, relayerKey, relayer, receiving };
}

/** A seller's `@x402/express` resource server whose facilitator is Attest at `origin`, with the seller's API key. */
export function attestResourceServer(origin: string, apiKey: string): x402ResourceServer {
  const auth = { Authorization: `Bearer ${apiKey}` };
  const facilitator = new HTTPFacilitatorClient({
    url: `${origin}/x402`,
    createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
  });
  return new x402ResourceServer(facilitator).register('eip155:1337', new ExactEvmServer());
}
