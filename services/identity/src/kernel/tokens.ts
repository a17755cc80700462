import { verify as verifySignature } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { newOpaqueId } from './ids';
import { JWS_KEY_OPTIONS, signJws } from './jws';
import type { KeyAlg } from './key-store';
import type { SigningKeys } from './signing-keys';
import { VerifiedTokens, type AccessTokenClaims, type ActorClaim, type TokenOrigin } from './verified-tokens';

export type { AccessTokenClaims, ActorClaim, TokenOrigin } from './verified-tokens';

export const ACCESS_TOKEN_TYP = 'at+jwt';
export const LOGOUT_TOKEN_TYP = 'logout+jwt';
const LOGOUT_TOKEN_TTL_SECONDS = 120;
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

export type IdTokenClaims = Record<string, unknown> & {
  iss: string;
  sub: string;
  aud: string;
  iat: number;
  exp: number;
};

/** `revoked`: signed by one of our keys that an emergency rotation revoked (the token is inactive). */
export type VerifyResult =
  | { ok: true; claims: AccessTokenClaims }
  | { ok: false; reason: 'malformed' | 'forged' | 'expired' | 'wrong_type' | 'revoked' };

export class TokenService {
  private readonly verified = new VerifiedTokens();

  constructor(
    private readonly keys: SigningKeys,
    private readonly issuer: string,
    private readonly accessTtl: number,
    private readonly idTtl: number,
    /** The clock of `iat` (tests move it on). */
    readonly now: () => number = Date.now,
    /**
     * RFC 9068 §2.1: the signing algorithm a resource (by uri, a token's `aud`) chose for its access tokens,
     * null when the uri is no resource's (the resources' directory, in memory once warm).
     */
    private readonly resourceAlg: (uri: string) => Promise<KeyAlg | null> = async () => null,
  ) {}

  /**
   * A token's algorithm: the resource's PS256 or ES256 when it chose one, else the app's (RS256, or a FAPI 2
   * app's PS256 or ES256: a resource left at RS256 never makes a FAPI 2 app's tokens RS256).
   */
  private async accessTokenAlg(aud: string, appAlg: KeyAlg): Promise<KeyAlg> {
    if (aud === this.issuer) return appAlg;
    const chosen = await this.resourceAlg(aud);
    return chosen && chosen !== 'RS256' ? chosen : appAlg;
  }

  private nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  get accessTokenTtl() {
    return this.accessTtl;
  }

  /** RFC 9068 access token: its own `typ`, bound to the app by client_id. */
  async accessToken(input: {
    sub: string;
    clientId: string;
    scopes: string[];
    sid?: string;
    /** Binds the token to this DPoP key thumbprint. */
    jkt?: string;
    signIn?: { acr: string; amr?: string[]; authTime: number };
    userinfoClaims?: string[];
    /** RFC 8707: the one resource (its uri) the token is for; without it, this issuer (/userinfo). */
    aud?: string;
    /**
     * The app's access_token_signed_response_alg: RS256 unless it set PS256 or ES256 (a fapi2 app); a resource
     * (aud) that chose PS256 or ES256 for its tokens has its own instead.
     */
    alg?: KeyAlg;
    /** RFC 9396 §9.1: the authorization details the person approved (CIBA, issue 42). */
    authorizationDetails?: Record<string, unknown>[];
    /** RFC 8693 §4.1 (issue 42): the agent acting for `sub`. */
    act?: ActorClaim;
    /** A delegated token's source (the person's app, the tokens it came from): it holds only while they do. */
    origin?: TokenOrigin;
    /** A lifetime shorter than ACCESS_TOKEN_TTL_SECONDS (a delegated token's). */
    ttlSeconds?: number;
  }): Promise<{ token: string; claims: AccessTokenClaims }> {
    const iat = this.nowSeconds();
    const claims: AccessTokenClaims = {
      iss: this.issuer,
      aud: input.aud ?? this.issuer,
      sub: input.sub,
      client_id: input.clientId,
      scope: input.scopes.join(' '),
      jti: newOpaqueId(),
      iat,
      exp: iat + (input.ttlSeconds ?? this.accessTtl),
      ...(input.sid ? { sid: input.sid } : {}),
      ...(input.jkt ? { cnf: { jkt: input.jkt } } : {}),
      ...(input.signIn
        ? {
            acr: input.signIn.acr,
            ...(input.signIn.amr ? { amr: input.signIn.amr } : {}),
            auth_time: input.signIn.authTime,
          }
        : {}),
      ...(input.userinfoClaims?.length ? { userinfo_claims: input.userinfoClaims } : {}),
      ...(input.authorizationDetails ? { authorization_details: input.authorizationDetails } : {}),
      ...(input.act ? { act: input.act } : {}),
      ...(input.origin ? { origin: input.origin } : {}),
    };
    const alg = await this.accessTokenAlg(claims.aud, input.alg ?? 'RS256');
    const key = await this.keys.signingKey(alg);
    const token = signJws({ alg, typ: ACCESS_TOKEN_TYP, kid: key.kid }, claims, key.privateKey);
    return { token, claims };
  }

  /** An id_token, signed with the app's id_token_signed_response_alg (RS256 unless it asked for PS256 or ES256). */
  async idToken(
    claims: Record<string, unknown> & { sub: string; aud: string },
    alg: KeyAlg = 'RS256',
  ): Promise<string> {
    const iat = this.nowSeconds();
    const payload = { iss: this.issuer, ...claims, jti: newOpaqueId(), iat, exp: iat + this.idTtl };
    const key = await this.keys.signingKey(alg);
    return signJws({ alg, typ: 'JWT', kid: key.kid }, payload, key.privateKey);
  }

  /** OpenID Connect Back-Channel Logout 1.0 §2.4: typ logout+jwt, the logout event, sid and sub, never a nonce. */
  async logoutToken(input: { aud: string; sub: string; sid: string }): Promise<string> {
    const iat = this.nowSeconds();
    const payload = {
      iss: this.issuer,
      aud: input.aud,
      sub: input.sub,
      sid: input.sid,
      iat,
      exp: iat + LOGOUT_TOKEN_TTL_SECONDS,
      jti: newOpaqueId(),
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    };
    const key = await this.keys.signingKey();
    return signJws({ alg: 'RS256', typ: LOGOUT_TOKEN_TYP, kid: key.kid }, payload, key.privateKey);
  }

  /**
   * An id_token we signed, for logout's id_token_hint: signature (by kid) and issuer are checked, and
   * expiry is not (OpenID Connect RP-Initiated Logout 1.0 §2 lets a hint be expired).
   */
  async verifyIdTokenHint(token: string): Promise<IdTokenClaims | null> {
    const decoded = jwt.decode(token, { complete: true });
    if (
      !decoded ||
      typeof decoded.payload === 'string' ||
      !decoded.header.kid ||
      // an id_token's typ, as idToken() writes it: never an access, logout or login hint token
      decoded.header.typ !== 'JWT'
    )
      return null;
    const key = await this.keys.verificationKey(decoded.header.kid);
    if (!key) return null;
    try {
      jwt.verify(token, key, { algorithms: ['RS256', 'PS256', 'ES256'], issuer: this.issuer, ignoreExpiration: true });
    } catch {
      return null;
    }
    const payload = decoded.payload as Partial<IdTokenClaims>;
    if (typeof payload.sub !== 'string' || typeof payload.aud !== 'string' || payload.events !== undefined) return null;
    return payload as IdTokenClaims;
  }

  /**
   * Checks shape, signature (by kid), issuer, expiry and type. An id_token is `wrong_type`.
   * A token verified once is remembered until it expires, or until its key leaves the JWKS (an
   * emergency rotation, seen by every replica through the bus); revocation is the caller's check.
   */
  async verifyAccessToken(token: string): Promise<VerifyResult> {
    const key = VerifiedTokens.keyOf(token);
    const known = this.verified.get(key);
    if (known === 'expired') return { ok: false, reason: 'expired' };
    if (known) {
      if (await this.keys.isPublished(known.kid)) return { ok: true, claims: known.claims };
      this.verified.forget(key);
    }
    const result = await this.verifyOnce(token);
    if (result.ok) this.verified.remember(key, result.kid, result.claims);
    return result.ok ? { ok: true, claims: result.claims } : result;
  }

  /**
   * Verifies an access token that is not remembered yet: read and checked here rather than with
   * jsonwebtoken, whose decode-then-verify parsed the token twice and checked the key's type on every
   * call (half of the verification's share of an /introspect of tokens seen once). The same rules:
   * a compact JWS (as jws reads it) with a kid, alg RS256 only, the signature, then nbf, exp and iss
   * as jsonwebtoken checks them (exp: expired from its second on; a non-numeric nbf or exp is refused).
   */
  private async verifyOnce(
    token: string,
  ): Promise<Exclude<VerifyResult, { ok: true }> | { ok: true; claims: AccessTokenClaims; kid: string }> {
    const decoded = decodeJws(token);
    if (!decoded || typeof decoded.header.kid !== 'string' || !decoded.header.kid)
      return { ok: false, reason: 'malformed' };
    const kid = decoded.header.kid;
    const key = await this.keys.verificationKey(kid);
    if (!key) {
      // ours until an emergency rotation revoked its key: inactive while it would otherwise be valid
      const { exp } = decoded.payload as { exp?: unknown };
      const live = typeof exp === 'number' && exp * 1000 > Date.now();
      return { ok: false, reason: live && (await this.keys.isRevoked(kid)) ? 'revoked' : 'forged' };
    }
    // the alg of the key that kid names, never another (RS256, or PS256/ES256 for a fapi2 app's tokens)
    const alg = await this.keys.keyAlg(kid);
    if (
      alg === null ||
      decoded.header.alg !== alg ||
      !verifySignature(
        'sha256',
        Buffer.from(decoded.signingInput),
        JWS_KEY_OPTIONS[alg](key),
        Buffer.from(decoded.signature, 'base64url'),
      )
    )
      return { ok: false, reason: 'forged' };
    const { nbf, exp, iss } = decoded.payload as { nbf?: unknown; exp?: unknown; iss?: unknown };
    const nowSeconds = Math.floor(Date.now() / 1000);
    if (nbf !== undefined && (typeof nbf !== 'number' || nbf > nowSeconds)) return { ok: false, reason: 'forged' };
    if (exp !== undefined && typeof exp !== 'number') return { ok: false, reason: 'forged' };
    if (typeof exp === 'number' && nowSeconds >= exp) return { ok: false, reason: 'expired' };
    if (iss !== this.issuer) return { ok: false, reason: 'forged' };
    const payload = decoded.payload as Partial<AccessTokenClaims>;
    if (
      decoded.header.typ !== ACCESS_TOKEN_TYP ||
      typeof payload.client_id !== 'string' ||
      typeof payload.jti !== 'string'
    )
      return { ok: false, reason: 'wrong_type' };
    return { ok: true, claims: payload as AccessTokenClaims, kid };
  }
}

/** As jws reads a compact JWS: three base64url parts (the last may be empty). */
const COMPACT_JWS = /^[a-zA-Z0-9\-_]+?\.[a-zA-Z0-9\-_]+?\.([a-zA-Z0-9\-_]+)?$/;

/** A compact JWS's header and payload (JSON objects both), or null when it is not one. */
function decodeJws(token: string): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signingInput: string;
  signature: string;
} | null {
  if (!COMPACT_JWS.test(token)) return null;
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  const object = (part: string): Record<string, unknown> | null => {
    try {
      const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
      return typeof value === 'object' && value !== null && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : null;
    } catch {
      return null;
    }
  };
  const header = object(token.slice(0, first));
  const payload = object(token.slice(first + 1, second));
  if (!header || !payload) return null;
  return { header, payload, signingInput: token.slice(0, second), signature: token.slice(second + 1) };
}
