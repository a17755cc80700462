import { randomInt } from 'node:crypto';
import { hmacHex } from '../kernel/crypto';
import { newOpaqueId } from '../kernel/ids';

/**
 * RFC 8628 §6.1: the user code's alphabet, consonants only (no vowels, so no words; no look-alike digits),
 * 20 letters: 8 of them are 20^8 ≈ 2^34.6 codes, with a few wrong guesses per address allowed.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;

/** A new user code, shown as XXXX-XXXX. */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What the person typed, as the code it means (XXXX-XXXX), or null when it cannot be one: case, spaces and
 * dashes do not matter (RFC 8628 §6.1).
 */
export function normaliseUserCode(typed: unknown): string | null {
  if (typeof typed !== 'string' || typed.length > 40) return null;
  const letters = typed.toUpperCase().replace(/[\s-]/g, '');
  if (letters.length !== USER_CODE_LENGTH || [...letters].some((c) => !USER_CODE_ALPHABET.includes(c))) return null;
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
}

/** A new device code: 256 random bits, the client's secret while it polls. */
export const newDeviceCode = (): string => newOpaqueId();
export const DEVICE_CODE = /^[0-9a-f]{64}$/;

/** Both codes are kept as keyed hashes (a user code is short: a plain hash of it could be reversed). */
export const codeHash = (secret: string, kind: 'device' | 'user', code: string): string =>
  hmacHex(secret, `device-flow:${kind}:${code}`);
