/**
 * Whether a signature of a challenge is the address's: EIP-191 (personal_sign) recovered to the address, or,
 * for an address that holds code on a chain with an RPC, EIP-1271's isValidSignature(hash, signature)
 * answering its magic value. viem is loaded at the first proof (it costs about 12 MB of a process's memory).
 */
import { errors } from '@attest/common';

/** isValidSignature(bytes32,bytes)'s answer for a valid signature (EIP-1271). */
const EIP1271_MAGIC = '0x1626ba7e';

const EIP1271_ABI = [
  {
    type: 'function',
    name: 'isValidSignature',
    stateMutability: 'view',
    inputs: [
      { name: 'hash', type: 'bytes32' },
      { name: 'signature', type: 'bytes' },
    ],
    outputs: [{ name: '', type: 'bytes4' }],
  },
] as const;

export interface SignatureVerifier {
  /** How the address signed `message` (eip191, eip1271), or null when `signature` is not its signature. */
  verify(chain: string, address: string, message: string, signature: string): Promise<'eip191' | 'eip1271' | null>;
}

/**
 * `rpcUrls`: the RPC of each chain whose contracts can prove (EIP-1271); an address with no RPC for its chain
 * proves with an EIP-191 signature only.
 */
export function signatureVerifier(rpcUrls: Readonly<Record<string, string>>, timeoutMs = 10000): SignatureVerifier {
  return {
    async verify(chain, address, message, signature) {
      const viem = await import('viem');
      const sig = signature as `0x${string}`;
      const account = address.toLowerCase();
      try {
        const recovered = await viem.recoverMessageAddress({ message, signature: sig });
        if (recovered.toLowerCase() === account) return 'eip191';
      } catch {
        // not an ECDSA signature (a contract's signature may be anything): asked of the contract below
      }
      const url = rpcUrls[chain];
      if (!url) return null;
      const client = viem.createPublicClient({ transport: viem.http(url, { timeout: timeoutMs, retryCount: 1 }) });
      const target = viem.getAddress(account);
      let code: string | undefined;
      try {
        code = await client.getCode({ address: target });
      } catch (cause) {
        throw errors.unavailable(`RPC of ${chain}`, cause);
      }
      if (!code || code === '0x') return null;
      try {
        const answer = await client.readContract({
          address: target,
          abi: EIP1271_ABI,
          functionName: 'isValidSignature',
          args: [viem.hashMessage(message), sig],
        });
        return answer.toLowerCase() === EIP1271_MAGIC ? 'eip1271' : null;
      } catch {
        // a contract that reverts (or has no isValidSignature) does not accept the signature
        return null;
      }
    },
  };
}
