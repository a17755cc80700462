/**
 * DPoP (RFC 9449) proofs for the bench, made with node:crypto: an ES256 key per target, and a fresh
 * proof (new jti, current iat) for each request, with `ath` when it goes with an access token. Made in
 * the bench process (core 1), so the servers' figures carry only their verification.
 */
import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';

export interface DpopKey {
  privateKey: KeyObject;
  /** The public JWK of the proofs' header. */
  jwk: Record<string, string>;
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function dpopKey(): DpopKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' }) as Record<string, string>;
  return { privateKey, jwk: { kty, crv, x, y } };
}

/** A proof for `htm` `htu` (and the access token, as its SHA-256 `ath`). */
export function dpopProof(key: DpopKey, htm: string, htu: string, accessToken?: string): string {
  const header = b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk });
  const payload = b64({
    jti: randomUUID(),
    htm,
    htu,
    iat: Math.floor(Date.now() / 1000),
    ...(accessToken ? { ath: createHash('sha256').update(accessToken).digest('base64url') } : {}),
  });
  const signature = sign('sha256', Buffer.from(`${header}.${payload}`), {
    key: key.privateKey,
    dsaEncoding: 'ieee-p1363',
  });
  return `${header}.${payload}.${signature.toString('base64url')}`;
}
