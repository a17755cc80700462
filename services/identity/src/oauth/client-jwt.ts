import type { KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { SigningAlg } from '../kernel/app-store';
import { CLIENT_SIGNING_ALGS } from './client-keys';

/** Seconds of clock difference tolerated between the app and us (exp, nbf, iat). */
export const CLOCK_TOLERANCE_SECONDS = 30;

/** A JWT an app signed (a client assertion or a request object), decoded but not yet verified. */
export interface ClientJwt {
  token: string;
  alg: SigningAlg;
  kid?: string;
  payload: Record<string, unknown>;
}

/** The JWT's header and claims; null when it is not a JWT signed with one of the accepted algorithms (never none). */
export function decodeClientJwt(token: string): ClientJwt | null {
  const decoded = jwt.decode(token, { complete: true });
  if (!decoded || typeof decoded.payload !== 'object' || decoded.payload === null) return null;
  const alg = decoded.header.alg as SigningAlg;
  if (!CLIENT_SIGNING_ALGS.includes(alg)) return null;
  const kid = typeof decoded.header.kid === 'string' ? decoded.header.kid : undefined;
  return { token, alg, kid, payload: decoded.payload as Record<string, unknown> };
}

export interface ClientJwtExpectations {
  /** Who must have signed it: the app (`iss`). */
  issuer: string;
  /**
   * Who it is for, the first named in the error: our issuer identifier (a request object, a FAPI 2.0 app's
   * assertion), or also the token endpoint's URL (other apps' assertions, OpenID Connect Core §9).
   */
  audiences: readonly string[];
  nowSeconds: number;
  /** The longest life (exp - now) accepted, when given: a client assertion is short-lived. */
  maxLifetimeSeconds?: number;
  /** `jti` required (client assertions: replay is refused by it). */
  requireJti?: boolean;
}

/**
 * Verifies signature, `iss`, `aud`, `exp` (required), `nbf` and the lifetime; synchronous, so it can run in
 * the tick of a failure limit's check. The problem, as a sentence naming the claim, or null when valid.
 */
export function clientJwtProblem(
  decoded: ClientJwt,
  key: KeyObject | null,
  expect: ClientJwtExpectations,
): string | null {
  if (!key) return `no key of the app matches the JWT's kid and alg (${decoded.alg}).`;
  try {
    jwt.verify(decoded.token, key, {
      algorithms: [decoded.alg],
      clockTimestamp: expect.nowSeconds,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
    });
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'TokenExpiredError') return 'the JWT has expired (exp).';
    if (name === 'NotBeforeError') return 'the JWT is not valid yet (nbf).';
    return 'the JWT signature is invalid.';
  }
  const { iss, aud, exp, jti } = decoded.payload;
  if (iss !== expect.issuer) return 'iss must be the client_id.';
  const audiences = Array.isArray(aud) ? aud : [aud];
  if (!audiences.some((a) => expect.audiences.includes(a as string))) {
    const [issuer, ...others] = expect.audiences;
    return `aud must be the issuer (${issuer})${others.map((o) => ` or ${o}`).join('')}.`;
  }
  if (typeof exp !== 'number') return 'exp is required.';
  if (
    expect.maxLifetimeSeconds !== undefined &&
    exp - expect.nowSeconds > expect.maxLifetimeSeconds + CLOCK_TOLERANCE_SECONDS
  )
    return `exp must be at most ${expect.maxLifetimeSeconds} seconds ahead.`;
  if (expect.requireJti && (typeof jti !== 'string' || jti.length === 0 || jti.length > 256))
    return 'jti is required (at most 256 characters).';
  return null;
}
