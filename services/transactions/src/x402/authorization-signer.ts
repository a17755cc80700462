import path from 'node:path';
import { keccak_256 } from '@noble/hashes/sha3';
import {
  domainSeparator,
  hexToBytes,
  isHex,
  recoverAddress,
  size,
  type Hex,
  type TypedDataDefinition,
  type TypedDataDomain,
} from 'viem';
import type { authorizationTypes } from '@x402/evm';

/** EIP-712 typed data of a TransferWithAuthorization (x402-chain.ts's authorizationTypedData builds it). */
type AuthorizationTypedData = TypedDataDefinition<typeof authorizationTypes, 'TransferWithAuthorization'>;

/**
 * The EIP-712 digest of an EIP-3009 authorization and the address that signed it, at a small cost per verify.
 *
 * viem's recoverTypedDataAddress (hashTypedData, then @noble/curves' recoverPublicKey in JavaScript) took
 * 2.6 ms of CPU a verify, four fifths of it: the x402 verify row could not pass ~200/s on one core. Here the
 * token's domain separator is hashed once per token and domain (it does not change), the message is encoded
 * from its fixed layout, and the public key is recovered by libsecp256k1 (the `secp256k1` package's prebuilt
 * N-API binding, ~0.06 ms). Where that binding cannot load (a platform without a prebuild), viem's recovery
 * runs as before. The answers are viem's, bit for bit: the same digest, the same signature parsing (65
 * bytes, v 0/1/27/28), the same refusals (test/x402-signer.test.ts compares the two), and one more: a high s.
 *
 * A high s (over half the group order) recovers a key as well as its low twin (ecrecover's malleability), and viem
 * accepts it; the tokens do not. USDC's FiatToken (its ECRecover) and OpenZeppelin's ECDSA refuse an s in the
 * upper half (EIP-2), so an EOA's high-s authorization would pass verify and then fail at settle. It is refused
 * here, on both recoveries; a contract wallet's signature is still its ERC-1271 isValidSignature's to judge.
 */

/** libsecp256k1's recovery, as the `secp256k1` package's binding exposes it (it throws on a bad signature). */
interface NativeSecp256k1 {
  ecdsaRecover(signature: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
}

let native: NativeSecp256k1 | null | undefined;

/** The binding, loaded at the first recovery (as viem is, at x402's first use); null where it does not load. */
function binding(): NativeSecp256k1 | null {
  if (native === undefined)
    try {
      // the binding alone: the package's main module would fall back to `elliptic` in JavaScript when it fails
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a native module, loaded at first use
      native = require('secp256k1/bindings') as NativeSecp256k1;
    } catch {
      native = null;
    }
  return native;
}

/** Which recovery runs here: 'libsecp256k1' (native) or 'noble' (viem's, in JavaScript). */
export const signerRecovery = (): 'libsecp256k1' | 'noble' => (binding() ? 'libsecp256k1' : 'noble');

/** The `keccak` package's N-API sponge (XKCP's Keccak-p[1600]), as its binding exposes it. */
interface NativeKeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Buffer;
}

let sponge: NativeKeccakState | null | undefined;

/**
 * The `keccak` package's prebuilt binding (linux-x64 glibc and musl, darwin-x64, win32-x64 inside the package),
 * loaded at the first hash without the package's stream API around it; null where it does not load, and
 * @noble/hashes' keccak_256 in JavaScript hashes instead. One sponge serves every hash: each runs start to end
 * synchronously.
 */
function keccakBinding(): NativeKeccakState | null {
  if (sponge === undefined)
    try {
      /* eslint-disable @typescript-eslint/no-require-imports -- a native module, loaded at first use */
      const State = (require('node-gyp-build') as (dir: string) => new () => NativeKeccakState)(
        path.dirname(require.resolve('keccak/package.json')),
      );
      /* eslint-enable @typescript-eslint/no-require-imports */
      sponge = new State();
    } catch {
      sponge = null;
    }
  return sponge;
}

/** Which keccak-256 runs here: 'native' (the `keccak` package's binding) or 'noble' (in JavaScript). */
export const keccakImplementation = (): 'native' | 'noble' => (keccakBinding() ? 'native' : 'noble');

/**
 * keccak-256, natively where the binding loads: three hash each verify (the message, the digest, the public key),
 * and @noble/hashes' took 13–20 µs each for 224 bytes on this machine against 2–4 µs natively.
 */
function keccak256(data: Uint8Array): Uint8Array {
  const state = keccakBinding();
  if (!state) return keccak_256(data);
  // rate 1088 and capacity 512 bits, the original Keccak padding (0x01, not SHA-3's 0x06): Ethereum's keccak256
  state.initialize(1088, 512);
  state.absorb(Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  state.absorbLastFewBits(0x01);
  const hash = state.squeeze(32);
  return new Uint8Array(hash.buffer, hash.byteOffset, hash.byteLength);
}

const encoder = new TextEncoder();
const TYPE_HASH = keccak_256(
  encoder.encode(
    'TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)',
  ),
);
const UINT256_LIMIT = 1n << 256n;
/** secp256k1's group order n halved: the largest s an EIP-3009 token accepts from an EOA (EIP-2). */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/**
 * Domain separators by chain, token, name and version. The name and version are the request's (checked against
 * the token's own when the token says them): bounded, so that requests naming many domains keep it small.
 */
const separators = new Map<string, Uint8Array>();
const MAX_SEPARATORS = 64;

function separatorOf(domain: TypedDataDomain): Uint8Array {
  const key = JSON.stringify([domain.chainId?.toString(), domain.verifyingContract, domain.name, domain.version]);
  let separator = separators.get(key);
  if (!separator) {
    separator = hexToBytes(domainSeparator({ domain }));
    if (separators.size >= MAX_SEPARATORS) separators.delete(separators.keys().next().value as string);
    separators.set(key, separator);
  }
  return separator;
}

/** Writes a uint256 big-endian into 32 bytes at `offset`. */
function putUint(out: Uint8Array, offset: number, value: bigint): void {
  // as viem's validateTypedData: a value that is no uint256 is no typed data
  if (value < 0n || value >= UINT256_LIMIT) throw new RangeError(`${value} is not a uint256`);
  let n = value;
  for (let i = offset + 31; i >= offset && n > 0n; i--) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
}

/**
 * keccak256("\x19\x01" ‖ domainSeparator ‖ hashStruct(message)): what the payer signed, as viem's hashTypedData
 * computes it. Expects verify's shapes (addresses, a 32-byte nonce); throws as hashTypedData does when a value is
 * out of range.
 */
export function authorizationDigest(typed: AuthorizationTypedData): Uint8Array {
  const m = typed.message;
  const struct = new Uint8Array(7 * 32);
  struct.set(TYPE_HASH, 0);
  struct.set(hexToBytes(m.from), 32 + 12);
  struct.set(hexToBytes(m.to), 64 + 12);
  putUint(struct, 96, m.value);
  putUint(struct, 128, m.validAfter);
  putUint(struct, 160, m.validBefore);
  struct.set(hexToBytes(m.nonce), 192);
  const message = new Uint8Array(2 + 32 + 32);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(separatorOf(typed.domain ?? {}), 2);
  message.set(keccak256(struct), 34);
  return keccak256(message);
}

/** As viem's recoverPublicKey reads the last byte: 0 or 1, or 27 or 28. */
function recoveryBit(v: number): number {
  if (v === 0 || v === 1) return v;
  if (v === 27) return 0;
  if (v === 28) return 1;
  throw new Error('Invalid yParityOrV value');
}

/** Whether the s of a 65-byte signature is in the upper half of the group order (which the tokens refuse). */
const highS = (signature: Hex) => BigInt(`0x${signature.slice(66, 130)}`) > HALF_N;

/**
 * The address whose key made `signature` (65 bytes: r, s, v) over `digest`, lower case. Throws what viem's
 * recoverAddress throws for: another length, a v that is no recovery bit, r or s out of range, no point; and for
 * an s over half the group order, which viem accepts but the token would refuse at settle.
 */
export async function recoverSigner(digest: Uint8Array, signature: Hex): Promise<string> {
  const wellFormed = isHex(signature) && size(signature) === 65;
  if (wellFormed && highS(signature)) throw new Error('invalid signature: s is over half the group order (EIP-2)');
  const native = binding();
  if (!native) return (await recoverAddress({ hash: digest, signature })).toLowerCase();
  if (!wellFormed) throw new Error('invalid signature length');
  const recid = recoveryBit(Number.parseInt(signature.slice(130), 16));
  const publicKey = native.ecdsaRecover(hexToBytes(`0x${signature.slice(2, 130)}`), recid, digest, false);
  const hash = keccak256(publicKey.subarray(1));
  return `0x${Buffer.from(hash.subarray(12)).toString('hex')}`;
}
