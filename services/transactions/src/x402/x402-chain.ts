import {
  createPublicClient,
  encodeFunctionData,
  createWalletClient,
  defineChain,
  fallback,
  http,
  keccak256,
  parseAbi,
  toHex,
  webSocket,
  type Address,
  type Hex,
  type PublicClient,
  type TypedDataDefinition,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { authorizationTypes, eip3009ABI, type ExactEIP3009Payload } from '@x402/evm';
import type { Db, Queryable } from '@attest/common';
import { authorizationDigest, recoverSigner } from './authorization-signer';
import { clientEthCall, type EthCall } from './eth-calls';
import { rpcFetch } from './rpc-fetch';

/** EIP-712 typed data of a TransferWithAuthorization, as the payer signed it. */
export type AuthorizationTypedData = TypedDataDefinition<typeof authorizationTypes, 'TransferWithAuthorization'>;

export type Authorization = ExactEIP3009Payload['authorization'];

const ERC1271_MAGIC = '0x1626ba7e';
const erc1271Abi = parseAbi(['function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)']);

// the 4-byte selectors of balanceOf(address) and authorizationState(address,bytes32) (x402-chain-reads.test.ts checks them
// against viem's encoding)
const BALANCE_OF = '0x70a08231';
const AUTHORIZATION_STATE = '0xe94a0102';

/** An address or a bytes32 (0x and 40 or 64 hexadecimal digits, verify checked) as one ABI word, without 0x. */
const word = (value: Hex) => value.slice(2).toLowerCase().padStart(64, '0');

/** What eth_call answered for a function returning one word: its first 32 bytes, as viem reads them. */
function firstWord(result: unknown): string {
  if (typeof result !== 'string' || !/^0x[0-9a-fA-F]{64}/.test(result))
    throw new Error(`eth_call answered ${JSON.stringify(result)?.slice(0, 80)}, not a 32-byte word (no contract?)`);
  return result.slice(2, 66);
}

export const decodeUint = (result: unknown): bigint => BigInt(`0x${firstWord(result)}`);

export function decodeBool(result: unknown): boolean {
  const value = decodeUint(result);
  // as viem's decoder: a bool word is 0 or 1, anything else is no bool
  if (value > 1n) throw new Error(`eth_call answered ${value}, not a bool`);
  return value === 1n;
}

/** A relayer transaction the chain refused to carry (reverted in simulation): the authorization would not settle. */
export class SimulationFailed extends Error {}

/** The typed data of an authorization for a token's EIP-712 domain on this chain. */
export function authorizationTypedData(
  domain: { name: string; version: string; chainId: number; token: Address },
  a: Authorization,
): AuthorizationTypedData {
  return {
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    domain: { name: domain.name, version: domain.version, chainId: domain.chainId, verifyingContract: domain.token },
    message: {
      from: a.from,
      to: a.to,
      value: BigInt(a.value),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
      nonce: a.nonce,
    },
  };
}

/** The reads verify makes: the token's domain, an authorization's state, balances, the payer's signature. */
export class X402Chain {
  private readonly domains = new Map<string, Promise<{ name: string; version: string } | null>>();

  /**
   * `ethCall` makes the nonce and balance reads: viem's client by default; the facilitator gives it
   * eth-calls.ts's batches (viem's client still behind them for anything but a plain answer).
   */
  constructor(
    readonly client: PublicClient,
    readonly chainId: number,
    private readonly ethCall: EthCall = clientEthCall(client),
  ) {}

  /** The token's EIP-712 name and version (EIP-5267 eip712Domain), or null when it does not say; cached. */
  tokenDomain(token: Address): Promise<{ name: string; version: string } | null> {
    const key = token.toLowerCase();
    let domain = this.domains.get(key);
    if (!domain) {
      domain = this.client.getEip712Domain({ address: token }).then(
        ({ domain: d }) => ({ name: d.name ?? '', version: d.version ?? '' }),
        () => null,
      );
      this.domains.set(key, domain);
      // an RPC failure is not remembered: the next verify asks again
      void domain.then((d) => d === null && this.domains.delete(key));
    }
    return domain;
  }

  /** Whether the authorization's nonce is used on chain (the token's authorizationState), asked at each call. */
  async authorizationUsed(token: Address, a: Authorization): Promise<boolean> {
    return decodeBool(await this.call(token, `${AUTHORIZATION_STATE}${word(a.from)}${word(a.nonce)}`));
  }

  /** The owner's balance of the token, asked at each call (never kept). */
  async balanceOf(token: Address, owner: Address): Promise<bigint> {
    return decodeUint(await this.call(token, `${BALANCE_OF}${word(owner)}`));
  }

  /**
   * eth_call at the latest block, batched with the calls made at the same time (eth-calls.ts). readContract did
   * the same with viem's ABI encoder and decoder, its call() and error wrapping around it: a third of a verify's
   * CPU. These two reads have fixed layouts (one or two 32-byte words in, one out), so they are encoded and
   * decoded here, as strictly as viem decodes them.
   */
  private call(to: Address, data: Hex): Promise<unknown> {
    return this.ethCall(to, data);
  }

  /**
   * Whether `signature` is the payer's over the typed data: an EOA's (recovered) or, when the payer is a contract,
   * what its ERC-1271 isValidSignature says.
   */
  async signedBy(typed: AuthorizationTypedData, payer: Address, signature: Hex): Promise<boolean> {
    // the digest and the recovery of authorization-signer.ts: viem's answers, at a fraction of their cost
    let digest: Uint8Array | null = null;
    try {
      digest = authorizationDigest(typed);
      if ((await recoverSigner(digest, signature)) === payer.toLowerCase()) return true;
    } catch {
      // not an ECDSA signature: a contract wallet's may still be valid
    }
    const code = await this.client.getCode({ address: payer });
    if (!code || code === '0x') return false;
    try {
      const magic = await this.client.readContract({
        address: payer,
        abi: erc1271Abi,
        functionName: 'isValidSignature',
        args: [toHex(digest ?? authorizationDigest(typed)), signature],
      });
      return magic.toLowerCase() === ERC1271_MAGIC;
    } catch {
      return false;
    }
  }
}

/**
 * The operator's relayer account: submits transferWithAuthorization and pays its gas. Sends are serialised
 * across replicas by a database advisory lock on the relayer's address (one account, one nonce sequence).
 */
export class Relayer {
  readonly address: Address;
  private readonly wallet;
  private readonly chain;

  constructor(
    private readonly client: PublicClient,
    transport: ReturnType<typeof x402Transport>,
    privateKey: Hex,
    chainId: number,
    private readonly db: Db,
  ) {
    const account = privateKeyToAccount(privateKey);
    this.address = account.address;
    this.chain = defineChain({
      id: chainId,
      name: `eip155:${chainId}`,
      nativeCurrency: { name: 'native', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [] } },
    });
    this.wallet = createWalletClient({ account, chain: this.chain, transport });
  }

  balance(): Promise<bigint> {
    return this.client.getBalance({ address: this.address });
  }

  /**
   * Simulates the transfer (SimulationFailed when it would revert) and returns the most it may cost in gas, with
   * the relayer's balance. Nothing is sent.
   */
  async quote(token: Address, a: Authorization, signature: Hex): Promise<{ cost: bigint; balance: bigint }> {
    let gas: bigint;
    try {
      gas = await this.client.estimateContractGas({
        address: token,
        abi: eip3009ABI,
        functionName: 'transferWithAuthorization',
        args: transferArgs(a, signature),
        account: this.address,
      });
    } catch (err) {
      throw new SimulationFailed((err as { shortMessage?: string }).shortMessage ?? (err as Error).message);
    }
    const [fees, balance] = await Promise.all([this.client.estimateFeesPerGas(), this.balance()]);
    return { cost: gas * (fees.maxFeePerGas ?? fees.gasPrice ?? 0n), balance };
  }

  /**
   * Signs the transfer, hands its hash to `beforeSend` (which records it, on the lock's connection: embedded
   * Postgres has one), then broadcasts it; under the relayer's lock, so two replicas never take the same account
   * nonce. Returns the transaction hash.
   */
  async submit(
    token: Address,
    a: Authorization,
    signature: Hex,
    beforeSend: (hash: Hex, db: Queryable) => Promise<void>,
  ): Promise<Hex> {
    return this.db.withClient(async (client) => {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [
        `attest:x402:relayer:${this.address.toLowerCase()}`,
      ]);
      try {
        const request = await this.wallet.prepareTransactionRequest({
          to: token,
          data: encodeTransfer(a, signature),
          chain: this.chain,
        });
        const raw = await this.wallet.signTransaction(request);
        const hash = keccak256(raw);
        await beforeSend(hash, client);
        await this.wallet.sendRawTransaction({ serializedTransaction: raw });
        return hash;
      } finally {
        await client
          .query('SELECT pg_advisory_unlock(hashtext($1))', [`attest:x402:relayer:${this.address.toLowerCase()}`])
          .catch(() => undefined);
      }
    });
  }

  /** Whether the node knows the transaction (pending or mined). */
  async known(hash: Hex): Promise<boolean> {
    try {
      await this.client.getTransaction({ hash });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Whether a transaction of the authorization that has no receipt will never carry it: the node does not know
   * the transaction, the authorization is unused on chain and the latest block is at or past its validBefore
   * (the token refuses it from then on, so nothing can move any more). False when unsure (an RPC failure).
   */
  async neverLands(hash: Hex, token: Address, a: Authorization): Promise<boolean> {
    try {
      if (await this.known(hash)) return false;
      const [used, block] = await Promise.all([
        this.client.readContract({
          address: token,
          abi: eip3009ABI,
          functionName: 'authorizationState',
          args: [a.from, a.nonce],
        }),
        this.client.getBlock({ blockTag: 'latest' }),
      ]);
      return !used && block.timestamp >= BigInt(a.validBefore);
    } catch {
      return false;
    }
  }

  /** Waits for the transaction's receipt: whether it succeeded. */
  async outcome(hash: Hex, timeoutMs: number): Promise<'success' | 'reverted'> {
    const receipt = await this.client.waitForTransactionReceipt({ hash, timeout: timeoutMs, pollingInterval: 250 });
    return receipt.status;
  }
}

const transferArgs = (a: Authorization, signature: Hex) =>
  [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, signature] as const;

function encodeTransfer(a: Authorization, signature: Hex): Hex {
  return encodeFunctionData({
    abi: eip3009ABI,
    functionName: 'transferWithAuthorization',
    args: transferArgs(a, signature),
  });
}

/** The most calls in one JSON-RPC batch (public nodes commonly accept 100 or more). */
const RPC_BATCH_SIZE = 50;

/**
 * A transport over the RPC URLs (CHAIN_RPC_URL), failing over in order. Over HTTP the calls made together are
 * sent as one JSON-RPC batch (a verify's nonce and balance reads, and those of the verifies running at the
 * same time): one request to the node instead of one per call, made with node:http (rpc-fetch.ts) rather than
 * undici's fetch, which cost four times as much CPU a request.
 */
export function x402Transport(urls: readonly string[], timeoutMs: number) {
  return fallback(
    urls.map((url) =>
      url.startsWith('ws')
        ? webSocket(url, { timeout: timeoutMs })
        : http(url, { timeout: timeoutMs, batch: { batchSize: RPC_BATCH_SIZE, wait: 0 }, fetchFn: rpcFetch }),
    ),
  );
}

export function x402Client(transport: ReturnType<typeof x402Transport>): PublicClient {
  return createPublicClient({ transport, cacheTime: 0 }) as PublicClient;
}
