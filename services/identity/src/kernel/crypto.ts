import {
  createHash,
  createHmac,
  createSecretKey,
  randomBytes,
  scrypt,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';

const scryptOnce = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/**
 * At most two scrypt computations at once per process: at N=2^17 each holds 128 MiB outside the V8
 * heap, so two stay within the 512 Mi container limit beside the heap; more sign-ins at the same
 * moment wait their turn (a third of a second each) instead of ending the process out of memory.
 */
const SCRYPT_CONCURRENCY = 2;
let running = 0;
const waiting: (() => void)[] = [];

async function scryptAsync(...args: Parameters<typeof scryptOnce>): Promise<Buffer> {
  if (running >= SCRYPT_CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await scryptOnce(...args);
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/**
 * Random bytes drawn from OpenSSL's generator 4 KiB at a time, each byte handed out once, as Node's
 * own randomUUID does: a sign-in round trip draws three or four ids, and one call into the generator
 * per id cost more than the bytes. Larger requests go to the generator directly.
 */
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomOffset = 0;

export function randomHex(bytes: number): string {
  if (bytes > RANDOM_POOL_BYTES / 8) return randomBytes(bytes).toString('hex');
  if (randomOffset + bytes > randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    randomOffset = 0;
  }
  const hex = randomPool.toString('hex', randomOffset, randomOffset + bytes);
  // what was handed out is not kept in memory afterwards
  randomPool.fill(0, randomOffset, randomOffset + bytes);
  randomOffset += bytes;
  return hex;
}
export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
/**
 * HMAC keys made once per key string (the server secret: a handful per process at most), so that a
 * client secret checked per request does not convert its key from a string every time.
 */
const hmacKeys = new Map<string, KeyObject>();
function hmacKey(key: string): KeyObject {
  let object = hmacKeys.get(key);
  if (!object) {
    if (hmacKeys.size >= 16) hmacKeys.clear();
    object = createSecretKey(Buffer.from(key, 'utf8'));
    hmacKeys.set(key, object);
  }
  return object;
}

export const hmacHex = (key: string, value: string) => createHmac('sha256', hmacKey(key)).update(value).digest('hex');
export const base64url = (buffer: Buffer) => buffer.toString('base64url');

/**
 * scrypt cost: N = 2^cost, r = 8, p = 1. New hashes use PASSWORD_HASH_COST (17 by default: OWASP's
 * N=2^17, 128 MiB per hash); a stored hash keeps its own parameters, so older hashes still verify, and
 * a sign-in that verified one writes it again at the current cost (`needsRehash`).
 */
export const DEFAULT_PASSWORD_HASH_COST = 17;
export const MAX_PASSWORD_HASH_COST = 18;
const R = 8;
const P = 1;
/** scrypt needs 128·N·r bytes; twice that for the largest N allowed (and at least 256 MiB). */
const maxmemFor = (n: number) => Math.max(256 * 1024 * 1024, 2 * 128 * n * R);

/** scrypt password hash: `scrypt$N$r$p$salt$hash`. */
export async function hashPassword(password: string, cost = DEFAULT_PASSWORD_HASH_COST): Promise<string> {
  const salt = randomBytes(16);
  const N = 2 ** cost;
  const hash = await scryptAsync(password.normalize('NFKC'), salt, 32, { N, r: R, p: P, maxmem: maxmemFor(N) });
  return ['scrypt', N, R, P, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt') return false;
  const N = Number(n);
  // a stored hash is ours, but its parameters are bounded anyway: no row makes a sign-in take a GiB
  if (!(N >= 2 && N <= 2 ** MAX_PASSWORD_HASH_COST) || Number(r) !== R || Number(p) !== P) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(password.normalize('NFKC'), Buffer.from(salt, 'base64url'), expected.length, {
    N,
    r: R,
    p: P,
    maxmem: maxmemFor(N),
  });
  return timingSafeEqual(actual, expected);
}

/** Whether a stored hash was made with less than the current cost (it is rehashed at the next sign-in). */
export function needsRehash(stored: string, cost: number): boolean {
  const [kind, n, r, p] = stored.split('$');
  return kind !== 'scrypt' || Number(n) < 2 ** cost || Number(r) !== R || Number(p) !== P;
}

/** A stored hash to verify against when the user does not exist, at the current cost, so timing does not reveal it. */
export const dummyPasswordHash = (cost = DEFAULT_PASSWORD_HASH_COST): string =>
  `scrypt$${2 ** cost}$${R}$${P}$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;

/** Signing keys at rest: the shared AES-256-GCM format (`v1.iv.tag.ciphertext`). */
export { decrypt, encrypt } from '@attest/common';

/** OIDC Core at_hash / c_hash: base64url of the left half of SHA-256 of the ASCII value. */
export function halfHash(value: string): string {
  const digest = createHash('sha256').update(value, 'ascii').digest();
  return base64url(digest.subarray(0, digest.length / 2));
}
