import { createHash } from 'node:crypto';

/** RFC 8693 §4.1: who acts for the subject (an agent's client id), and who acted before it in a chain. */
export interface ActorClaim {
  sub: string;
  act?: ActorClaim;
}

export interface AccessTokenClaims {
  iss: string;
  aud: string;
  sub: string;
  client_id: string;
  scope: string;
  jti: string;
  iat: number;
  exp: number;
  /** The session it was issued in, as the app's id_token names it: ending the session revokes it. */
  sid?: string;
  /** DPoP-bound (RFC 9449 §6.1): the RFC 7638 thumbprint of the key every use must prove. */
  cnf?: { jkt: string };
  /** The sign-in behind it (RFC 9068 §2.2.1), for /introspect and an app's RFC 9470 step-up. */
  acr?: string;
  amr?: string[];
  auth_time?: number;
  /** The sign-in claims the claims parameter asked /userinfo for (acr, amr, auth_time). */
  userinfo_claims?: string[];
  /** RFC 9396: what the person approved (CIBA, issue 42), as the app asked for it. */
  authorization_details?: Record<string, unknown>[];
  /** A delegated token (issue 42, RFC 8693 token exchange): the agent acting for `sub`. */
  act?: ActorClaim;
  /**
   * A delegated token's source: the app the person's own token was issued to, and the ids of the tokens it
   * was exchanged from (oldest first). It holds only while they do: that app's consent, and none of them revoked.
   */
  origin?: TokenOrigin;
}

export interface TokenOrigin {
  client_id: string;
  jti: string[];
  /** When the person gave that app their token: an agent they ended or withdrew since takes nothing from before. */
  iat: number;
}

/**
 * Access tokens whose signature was verified, remembered until they expire, so a token presented
 * again costs a hash and a map lookup instead of an RSA verification. Keyed by a SHA-256 of the
 * token (no token is kept in clear); bounded, oldest first out. Revocation is not remembered here:
 * callers check it on every request.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, { kid: string; claims: AccessTokenClaims }>();

  constructor(private readonly max = 10000) {}

  static keyOf(token: string): string {
    return createHash('sha256').update(token).digest('base64');
  }

  /** The claims and the kid that signed them, or undefined when unknown; 'expired' once past exp (and then forgotten). */
  get(key: string): { kid: string; claims: AccessTokenClaims } | 'expired' | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.claims.exp * 1000 > Date.now()) return entry;
    this.entries.delete(key);
    return 'expired';
  }

  remember(key: string, kid: string, claims: AccessTokenClaims): void {
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, Object.freeze({ kid, claims: Object.freeze({ ...claims }) }));
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
