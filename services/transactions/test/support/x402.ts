import { randomBytes } from 'node:crypto';
import { createWalletClient, http as viemHttp, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { authorizationTypes } from '@x402/evm';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { compileEip3009Token } from './eip3009-token';
import type { Address, LocalChain } from './local-chain';

/** The EIP-712 name and version the tests' token is deployed with (its eip712Domain answers them). */
export const TOKEN_NAME = 'Test USD';
export const TOKEN_VERSION = '2';

/** The x402 tests' contracts on a local chain: the EIP-3009 token, minting, funding, a contract wallet. */
export interface X402Chain {
  token: Address;
  mint(to: Address, value: bigint): Promise<void>;
  /** Sends native currency (gas money) from ganache's first account. */
  fund(to: Address, wei: bigint): Promise<void>;
  /** Deploys an ERC-1271 wallet that accepts what `owner` signs. */
  deployWallet(owner: Address): Promise<Address>;
  balanceOf(owner: Address): Promise<bigint>;
  /** The number of transactions an account sent (its nonce). */
  sent(account: Address): Promise<number>;
}

/** Deploys the EIP-3009 token (TOKEN_NAME, TOKEN_VERSION) with `decimals`, and a contract wallet's bytecode. */
export async function deployX402Token(chain: LocalChain, decimals = 6): Promise<X402Chain> {
  const { token: compiled, wallet: walletContract } = compileEip3009Token();
  const wallet = createWalletClient({ transport: viemHttp(chain.url) });
  const from = chain.accounts[0];
  const deployed = async (hash: Hex) =>
    ((await chain.rpc('eth_getTransactionReceipt', [hash])) as { contractAddress: Address }).contractAddress;
  const token = await deployed(
    await wallet.deployContract({
      abi: compiled.abi,
      bytecode: compiled.bytecode,
      args: [TOKEN_NAME, TOKEN_VERSION, decimals],
      account: from,
      chain: null,
      gas: 3000000n,
    }),
  );
  return {
    token,
    async mint(to, value) {
      await wallet.writeContract({
        address: token,
        abi: compiled.abi,
        functionName: 'mint',
        args: [to, value],
        account: from,
        chain: null,
        gas: 100000n,
      });
    },
    async fund(to, wei) {
      await chain.rpc('eth_sendTransaction', [{ from, to, value: `0x${wei.toString(16)}` }]);
    },
    async deployWallet(owner) {
      return deployed(
        await wallet.deployContract({
          abi: walletContract.abi,
          bytecode: walletContract.bytecode,
          args: [owner],
          account: from,
          chain: null,
          gas: 1000000n,
        }),
      );
    },
    async balanceOf(owner) {
      const data = `0x70a08231${owner.slice(2).toLowerCase().padStart(64, '0')}`;
      return BigInt((await chain.rpc('eth_call', [{ to: token, data }, 'latest'])) as string);
    },
    async sent(account) {
      return Number(BigInt((await chain.rpc('eth_getTransactionCount', [account, 'latest'])) as string));
    },
  };
}

export const newAccount = (): PrivateKeyAccount => privateKeyToAccount(generatePrivateKey());

/** A fresh private key and its address. */
export function newKey(): { key: Hex; address: Address } {
  const key = generatePrivateKey();
  return { key, address: privateKeyToAccount(key).address };
}

/** What the seller asks (the exact scheme's PaymentRequirements) for `amount` base units paid to `payTo`. */
export const requirementsFor = (
  token: Address,
  payTo: Address,
  amount: bigint,
  network = 'eip155:1337',
): PaymentRequirements => ({
  scheme: 'exact',
  network: network as PaymentRequirements['network'],
  asset: token,
  amount: amount.toString(),
  payTo,
  maxTimeoutSeconds: 300,
  extra: { name: TOKEN_NAME, version: TOKEN_VERSION },
});

export interface AuthorizationOptions {
  to?: Address;
  value?: bigint;
  validAfter?: bigint;
  validBefore?: bigint;
  nonce?: Hex;
  /** Who signs (the payer's own key by default); `from` stays the payer. */
  signer?: PrivateKeyAccount;
  /** The payer's address when it is not the signer's (a contract wallet). */
  from?: Address;
}

/** A buyer's PaymentPayload: an EIP-3009 authorization signed as @x402/evm's exact client signs it. */
export async function signedPayment(
  payer: PrivateKeyAccount,
  requirements: PaymentRequirements,
  options: AuthorizationOptions = {},
): Promise<PaymentPayload> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: options.from ?? payer.address,
    to: options.to ?? (requirements.payTo as Address),
    value: (options.value ?? BigInt(requirements.amount)).toString(),
    validAfter: (options.validAfter ?? now - 600n).toString(),
    validBefore: (options.validBefore ?? now + 300n).toString(),
    nonce: options.nonce ?? (`0x${randomBytes(32).toString('hex')}` as Hex),
  };
  const signature = await (options.signer ?? payer).signTypedData({
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    domain: {
      name: TOKEN_NAME,
      version: TOKEN_VERSION,
      chainId: 1337,
      verifyingContract: requirements.asset as Address,
    },
    message: {
      from: authorization.from,
      to: authorization.to,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce,
    },
  });
  return {
    x402Version: 2,
    resource: { url: 'http://seller.test/paid' },
    accepted: requirements,
    payload: { authorization, signature },
  };
}
