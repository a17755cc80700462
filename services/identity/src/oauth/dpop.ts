import {
  createHash,
  createHmac,
  createPublicKey,
  constants,
  verify,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import type { Cache } from '@attest/common';
import { constantTimeEqual } from '@attest/common';
import { FAPI2_ALGORITHMS } from '../kernel/app-profile';

/**
 * DPoP (RFC 9449): proofs of possession of a key, sent in the `DPoP` header.
 *
 * A proof is a JWS (compact form) with `typ: dpop+jwt`, one of DPOP_ALGORITHMS, the public key as `jwk`
 * in its header, and `jti`, `htm`, `htu`, `iat` (and `ath` with an access token, `nonce` once the server
 * gave one). Verified with node:crypto (the key imported from its JWK by Node, which refuses a malformed
 * one); the thumbprint is RFC 7638. Each `jti` is accepted once per key, for as long as its `iat` is in the
 * window, through the shared cache (Redis with several replicas), so a replayed proof is refused on every
 * replica. Nonces are stateless: an HMAC of a time slot under the service secret, so any replica checks
 * any other's nonce without a round trip.
 */

/**
 * The proof algorithms accepted, as discovery's `dpop_signing_alg_values_supported` names them. Ed25519 is
 * the fully-specified name (RFC 9864) of EdDSA with that curve, which oauth4webapi and openid-client send.
 */
export const DPOP_ALGORITHMS = ['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519'] as const;
export type DpopAlgorithm = (typeof DPOP_ALGORITHMS)[number];

/** A proof over this size is refused before it is parsed (a 4096-bit RSA key fits in about 2.5 KiB). */
const MAX_PROOF_LENGTH = 8192;
const MIN_RSA_BITS = 2048;
const MAX_RSA_BITS = 8192;
/** Private members of a JWK: a proof carrying one is refused (the key is meant to stay with the client). */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const JTI = /^[\x21-\x7e]{1,256}$/;
/** A nonce is valid in its slot and the one after (so for between one and two slots). */
const NONCE_SLOT_SECONDS = 300;

export type DpopErrorCode = 'invalid_dpop_proof' | 'use_dpop_nonce';

/** A proof refused: the OAuth error (RFC 9449 §5, §7.1) and a sentence for error_description. */
export class DpopError extends Error {
  constructor(
    readonly error: DpopErrorCode,
    readonly description: string,
  ) {
    super(description);
    this.name = 'DpopError';
  }
}

export interface DpopOptions {
  /** Keys the nonces (the service secret). */
  secret: string;
  /** How far `iat` may be from now, either way. */
  proofWindowSeconds: number;
  /** Every proof must carry a nonce this server gave (`DPoP-Nonce`); otherwise a nonce is checked when present. */
  nonceRequired: boolean;
  now?: () => number;
}

/** What a proof must be for: the request's method and URL, and the access token it goes with (at a resource). */
export interface DpopExpectation {
  htm: string;
  htu: string;
  accessToken?: string;
  /** The app's own narrower list (a fapi2 app: FAPI2_ALGORITHMS), and the sentence naming why. */
  algorithms?: { allowed: readonly string[]; who: string };
}

/** A verified proof: the key's RFC 7638 SHA-256 thumbprint (the `jkt` a bound token carries). */
export interface DpopProof {
  jkt: string;
  alg: DpopAlgorithm;
}

interface PublicJwk {
  kty: string;
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
  [member: string]: unknown;
}

const invalid = (description: string) => new DpopError('invalid_dpop_proof', description);
const b64urlJson = (part: string): unknown => {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
};
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7638 thumbprint: SHA-256 of the required members, in lexicographic order, base64url. */
export function jwkThumbprint(jwk: PublicJwk): string {
  const members: Record<string, string[]> = {
    EC: ['crv', 'kty', 'x', 'y'],
    RSA: ['e', 'kty', 'n'],
    OKP: ['crv', 'kty', 'x'],
  };
  const names = Object.hasOwn(members, jwk.kty) ? members[jwk.kty] : undefined;
  if (!names) throw invalid(`DPoP proof jwk has an unsupported kty '${jwk.kty}'.`);
  const canonical = `{${names.map((m) => `${JSON.stringify(m)}:${JSON.stringify(jwk[m])}`).join(',')}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

/** `ath`: base64url SHA-256 of the access token's ASCII octets. */
export const accessTokenHash = (token: string) => createHash('sha256').update(token, 'ascii').digest('base64url');

/**
 * An `htu` in the form proofs are compared in (RFC 9449 §4.3): scheme and host lower-cased, default port
 * dropped, no query and no fragment. null when it is not an absolute http(s) URL.
 */
export function normaliseHtu(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * Public keys imported from proofs' JWKs, by alg and thumbprint (which covers every member the import
 * reads): a client proves with the same key request after request, and importing one costs as much as
 * verifying a signature. Bounded, oldest first out.
 */
const IMPORTED_KEYS_MAX = 10000;
const importedKeys = new Map<string, KeyObject>();

/** The key a header's `alg` may be used with, checked against the JWK's type and curve. */
function keyFor(alg: DpopAlgorithm, jwk: PublicJwk, jkt: string): KeyObject {
  const cacheKey = `${alg}.${jkt}`;
  const known = importedKeys.get(cacheKey);
  if (known) return known;
  const fits =
    alg === 'ES256'
      ? jwk.kty === 'EC' && jwk.crv === 'P-256'
      : alg === 'EdDSA' || alg === 'Ed25519'
        ? jwk.kty === 'OKP' && jwk.crv === 'Ed25519'
        : jwk.kty === 'RSA';
  if (!fits) throw invalid(`DPoP proof jwk does not fit alg ${alg}.`);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    throw invalid('DPoP proof jwk is not a valid public key.');
  }
  if (jwk.kty === 'RSA') {
    // bounded both ways: a huge modulus or exponent would make each verification slow
    const { modulusLength = 0, publicExponent = 0n } = key.asymmetricKeyDetails ?? {};
    if (modulusLength < MIN_RSA_BITS || modulusLength > MAX_RSA_BITS)
      throw invalid(`DPoP proof RSA keys must have ${MIN_RSA_BITS} to ${MAX_RSA_BITS} bits.`);
    if (publicExponent > 0xffffffffn) throw invalid('DPoP proof RSA key exponent is too large.');
  }
  if (importedKeys.size >= IMPORTED_KEYS_MAX) importedKeys.delete(importedKeys.keys().next().value as string);
  importedKeys.set(cacheKey, key);
  return key;
}

function signatureValid(alg: DpopAlgorithm, key: KeyObject, signingInput: string, signature: Buffer): boolean {
  const data = Buffer.from(signingInput, 'ascii');
  switch (alg) {
    case 'ES256':
      return verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
    case 'PS256':
      return verify(
        'sha256',
        data,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
        signature,
      );
    case 'RS256':
      return verify('sha256', data, key, signature);
    case 'EdDSA':
    case 'Ed25519':
      return verify(null, data, key, signature);
  }
}

/** Verifies DPoP proofs, issues and checks nonces, and refuses a proof's second use. */
export class DpopProofs {
  private readonly now: () => number;

  constructor(
    private readonly cache: Pick<Cache, 'setIfAbsent'>,
    private readonly options: DpopOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  get nonceRequired(): boolean {
    return this.options.nonceRequired;
  }

  private current: { slot: number; nonce: string } = { slot: -1, nonce: '' };

  /** A nonce for the `DPoP-Nonce` header: the current slot and its HMAC (made once per slot). */
  nonce(): string {
    const slot = Math.floor(this.now() / 1000 / NONCE_SLOT_SECONDS);
    if (this.current.slot !== slot) this.current = { slot, nonce: `${slot.toString(36)}.${this.nonceMac(slot)}` };
    return this.current.nonce;
  }

  private nonceMac(slot: number): string {
    return createHmac('sha256', this.options.secret).update(`dpop-nonce:${slot}`).digest('base64url').slice(0, 22);
  }

  private nonceValid(value: string): boolean {
    const [slotText, mac, ...rest] = value.split('.');
    if (rest.length > 0 || !slotText || !mac || !/^[0-9a-z]{1,12}$/.test(slotText)) return false;
    const slot = parseInt(slotText, 36);
    const current = Math.floor(this.now() / 1000 / NONCE_SLOT_SECONDS);
    if (slot !== current && slot !== current - 1) return false;
    return constantTimeEqual(mac, this.nonceMac(slot));
  }

  /**
   * The proof in `header` (the DPoP header's value; undefined when absent), for `expected`. Throws
   * DpopError; use_dpop_nonce when a nonce is required or the one sent is stale (answer with `nonce()`).
   */
  async verify(header: string | undefined, expected: DpopExpectation): Promise<DpopProof> {
    if (header === undefined || header === '') throw invalid('A DPoP proof is required (DPoP header).');
    if (header.length > MAX_PROOF_LENGTH) throw invalid('DPoP proof is too long.');
    const parts = header.split('.');
    if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]*$/.test(p)))
      throw invalid('DPoP header must hold exactly one proof, a JWS in compact form.');
    const [headerPart, payloadPart, signaturePart] = parts;
    const jose = b64urlJson(headerPart);
    const claims = b64urlJson(payloadPart);
    if (!isObject(jose) || !isObject(claims)) throw invalid('DPoP proof is not a JWT.');
    if (jose.typ !== 'dpop+jwt') throw invalid('DPoP proof typ must be dpop+jwt.');
    const alg = jose.alg as DpopAlgorithm;
    if (typeof jose.alg !== 'string' || !DPOP_ALGORITHMS.includes(alg))
      throw invalid(`DPoP proof alg must be one of ${DPOP_ALGORITHMS.join(', ')}.`);
    if (expected.algorithms && !expected.algorithms.allowed.includes(alg))
      throw invalid(
        `DPoP proof alg must be one of ${expected.algorithms.allowed.join(', ')} for ${expected.algorithms.who}; ${alg} is refused.`,
      );
    if (!isObject(jose.jwk) || typeof jose.jwk.kty !== 'string') throw invalid('DPoP proof header must carry a jwk.');
    const jwk = jose.jwk as PublicJwk;
    if (PRIVATE_JWK_MEMBERS.some((m) => m in jwk)) throw invalid('DPoP proof jwk must be a public key.');
    const jkt = jwkThumbprint(jwk);
    const key = keyFor(alg, jwk, jkt);
    if (!signatureValid(alg, key, `${headerPart}.${payloadPart}`, Buffer.from(signaturePart, 'base64url')))
      throw invalid('DPoP proof signature is invalid.');

    if (typeof claims.jti !== 'string' || !JTI.test(claims.jti)) throw invalid('DPoP proof jti is missing or invalid.');
    if (claims.htm !== expected.htm) throw invalid(`DPoP proof htm must be ${expected.htm}.`);
    const htu = typeof claims.htu === 'string' ? normaliseHtu(claims.htu) : null;
    if (htu === null || htu !== normaliseHtu(expected.htu))
      throw invalid(`DPoP proof htu must be ${normaliseHtu(expected.htu)}.`);
    const window = this.options.proofWindowSeconds;
    const nowSeconds = this.now() / 1000;
    if (typeof claims.iat !== 'number' || !Number.isFinite(claims.iat) || Math.abs(claims.iat - nowSeconds) > window)
      throw invalid(`DPoP proof iat must be within ${window} seconds of the server's time.`);
    if (expected.accessToken !== undefined) {
      if (typeof claims.ath !== 'string' || !constantTimeEqual(claims.ath, accessTokenHash(expected.accessToken)))
        throw invalid('DPoP proof ath does not match the access token.');
    }
    if (claims.nonce !== undefined) {
      if (typeof claims.nonce !== 'string' || !this.nonceValid(claims.nonce))
        throw new DpopError('use_dpop_nonce', 'DPoP proof nonce is stale or unknown; use the one in DPoP-Nonce.');
    } else if (this.options.nonceRequired) {
      throw new DpopError('use_dpop_nonce', 'A DPoP proof must carry the nonce given in DPoP-Nonce.');
    }

    // once per key and jti, for as long as the proof could pass the iat check: until iat + window (and a
    // little slack), so a flood of fresh proofs holds about window seconds of entries, not twice that
    const fresh = await this.cache.setIfAbsent(
      // 128 bits of the hash name the record: as unique as the whole, half the memory per proof remembered
      `dpop:jti:${createHash('sha256').update(`${jkt}.${claims.jti}`).digest().subarray(0, 16).toString('base64url')}`,
      '1',
      Math.max(1000, Math.ceil((claims.iat + window + 5) * 1000 - this.now())),
    );
    if (!fresh) throw invalid('DPoP proof was already used (jti replayed).');
    return { jkt, alg };
  }
}

/** The DPoP header of a request: undefined when absent; sent twice, Node joins the values (which then fail as one proof). */
export const dpopHeader = (req: { get(name: string): string | undefined }) => req.get('dpop');

/**
 * For other routes (/par): verify the request's proof for `expected`. Throws DpopError (see DpopProofs.verify).
 */
export const verifyDpopProof = (
  proofs: DpopProofs,
  req: { get(name: string): string | undefined },
  expected: DpopExpectation,
): Promise<DpopProof> => proofs.verify(dpopHeader(req), expected);

/** The `WWW-Authenticate` challenge of a resource refusing a request (RFC 9449 §7.1). */
export const dpopChallenge = (error: string, description: string) =>
  `DPoP error="${error}", error_description="${description.replace(/["\\]/g, '')}", algs="${DPOP_ALGORITHMS.join(' ')}"`;

/** A fapi2 app's proofs: PS256, ES256 or EdDSA only (FAPI 2.0 §5.4; issue 40, item 5); others: every DPOP_ALGORITHMS. */
export const dpopAlgorithmsOf = (app: { profile: string }): Pick<DpopExpectation, 'algorithms'> =>
  app.profile === 'fapi2'
    ? {
        algorithms: {
          allowed: DPOP_ALGORITHMS.filter((a) => FAPI2_ALGORITHMS.includes(a)),
          who: 'this app (FAPI 2.0 profile)',
        },
      }
    : {};
