import { decrypt } from '@attest/common';

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/;

/**
 * The relayer's private key from X402_RELAYER_KEY: sealed with KEY_ENCRYPTION_KEY (`v1.…`, what
 * `pnpm manage x402 seal-relayer-key` prints) and opened here, or 0x-hex in clear. A sentence saying what is wrong
 * (never the value) when it is neither.
 */
export function relayerKey(value: string, keyEncryptionKey: string): `0x${string}` | { problem: string } {
  let key = value;
  if (value.startsWith('v1.')) {
    try {
      key = decrypt(keyEncryptionKey, value);
    } catch {
      return { problem: 'X402_RELAYER_KEY is sealed, but not with this KEY_ENCRYPTION_KEY (or it is damaged)' };
    }
  }
  return PRIVATE_KEY.test(key)
    ? (key as `0x${string}`)
    : { problem: 'X402_RELAYER_KEY must be a private key (0x followed by 64 hexadecimal digits), sealed or not' };
}
