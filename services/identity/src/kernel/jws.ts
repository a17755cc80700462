import { constants, sign, type KeyObject, type SignKeyObjectInput } from 'node:crypto';
import type { KeyAlg } from './key-store';

/**
 * Compact JWS signing (RFC 7515 §7.1) of the tokens we issue, with node:crypto's one-shot sign.
 *
 * jsonwebtoken did the same through jws and jwa: it validated every payload against its option
 * schema, copied it, and went through a Sign stream: 4.2 % of a sign-in round trip's profile above the
 * RSA operation itself, 1.4 % now (bench/README.md, "The sign-in round trip's signatures"). The output is
 * the same: header members in jsonwebtoken's order (alg, typ, kid), the payload as given, and the
 * signature as JWA (RFC 7518 §3) defines it per algorithm.
 */
export interface JwsHeader {
  alg: KeyAlg;
  typ: string;
  kid: string;
}

/** The key with each algorithm's padding or encoding: for signing, and for node's verify alike. */
export const JWS_KEY_OPTIONS: Record<KeyAlg, (key: KeyObject) => KeyObject | SignKeyObjectInput> = {
  // RSASSA-PKCS1-v1_5 with SHA-256
  RS256: (key) => key,
  // RSASSA-PSS with SHA-256, MGF1 with SHA-256, a salt as long as the hash (RFC 7518 §3.5)
  PS256: (key) => ({ key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }),
  // ECDSA P-256 with SHA-256: R and S, 32 bytes each (RFC 7518 §3.4), not DER
  ES256: (key) => ({ key, dsaEncoding: 'ieee-p1363' }),
};

/** A header is the same for every token of one key and type: encoded once. */
const encodedHeaders = new Map<string, string>();
const MAX_ENCODED_HEADERS = 64;

function encodedHeader(header: JwsHeader): string {
  const cacheKey = `${header.alg} ${header.typ} ${header.kid}`;
  let encoded = encodedHeaders.get(cacheKey);
  if (encoded === undefined) {
    encoded = Buffer.from(JSON.stringify({ alg: header.alg, typ: header.typ, kid: header.kid })).toString('base64url');
    // keys rotate rarely; a bound keeps an unusual run of rotations from growing it
    if (encodedHeaders.size >= MAX_ENCODED_HEADERS) encodedHeaders.clear();
    encodedHeaders.set(cacheKey, encoded);
  }
  return encoded;
}

/** `header.payload.signature`, each part base64url without padding. */
export function signJws(header: JwsHeader, payload: object, key: KeyObject): string {
  const signingInput = `${encodedHeader(header)}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  const signature = sign('sha256', Buffer.from(signingInput), JWS_KEY_OPTIONS[header.alg](key));
  return `${signingInput}.${signature.toString('base64url')}`;
}
