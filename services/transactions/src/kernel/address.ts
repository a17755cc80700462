/**
 * EIP-55 addresses without viem: viem (about 12 MB of a process's memory) is loaded only by the chain
 * watcher, when CHAIN_RPC_URL is set; validating a request body or the CHAIN_TOKENS setting needs
 * only Keccak-256, from @noble/hashes (which viem itself uses).
 */
import { keccak_256 } from '@noble/hashes/sha3';

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The EIP-55 checksummed form of a 0x-prefixed 40-hex-digit address (any case). */
export function checksumAddress(address: string): `0x${string}` {
  if (!HEX_ADDRESS.test(address)) throw new Error('not an address: 0x followed by 40 hexadecimal digits');
  const lower = address.slice(2).toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(lower));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    // the i-th hex digit of the hash: high nibble for even i, low nibble for odd i
    const nibble = i % 2 === 0 ? hash[i >> 1] >> 4 : hash[i >> 1] & 0x0f;
    out += nibble >= 8 ? lower[i].toUpperCase() : lower[i];
  }
  return out as `0x${string}`;
}

/**
 * True for an address in lower case or with a valid EIP-55 checksum: what viem's
 * `isAddress(value, { strict: true })` accepts.
 */
export function isValidAddress(value: string): boolean {
  if (!HEX_ADDRESS.test(value)) return false;
  return value === value.toLowerCase() || checksumAddress(value) === value;
}
