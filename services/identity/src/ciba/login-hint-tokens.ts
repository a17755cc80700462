import { createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { newOpaqueId } from '../kernel/ids';
import { LOGIN_HINT_TOKEN_TYP } from '../kernel/tokens';

/** How long a login_hint_token names the person (30 days); ending the agent on the account page stops it sooner. */
export const LOGIN_HINT_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

/** A login_hint_token's claims: the app it names the person to (`aud`) and their pairwise `sub` there. */
export interface LoginHintClaims {
  iss: string;
  aud: string;
  sub: string;
  iat: number;
  exp: number;
  jti: string;
}

export type LoginHintCheck = { ok: true; claims: LoginHintClaims } | { ok: false; reason: 'expired' | 'invalid' };

/**
 * CIBA Core §7.1's login_hint_token as Attest issues it: a JWT (typ login-hint+jwt) the agent can read, MACed
 * (HS256) with a key derived from IDENTITY_SECRET, which only Attest holds. Not signed with the rotating keys
 * of /jwks: a key retired after 21 days would end a hint made for 30. The secret also keys the pairwise
 * subjects the hint carries, so a hint lives exactly as long as the `sub` it names.
 */
export class LoginHintTokens {
  private readonly key: Buffer;

  constructor(
    private readonly options: {
      issuer: string;
      secret: string;
      /** The tokens' clock (tests move it on). */
      now: () => number;
    },
  ) {
    this.key = createHmac('sha256', options.secret).update('login_hint_token:v1').digest();
  }

  private nowSeconds(): number {
    return Math.floor(this.options.now() / 1000);
  }

  /** A hint naming the person, by their pairwise `sub` for the app `aud`. */
  issue(input: { aud: string; sub: string }): LoginHintClaims & { token: string } {
    const iat = this.nowSeconds();
    const claims: LoginHintClaims = {
      iss: this.options.issuer,
      aud: input.aud,
      sub: input.sub,
      iat,
      exp: iat + LOGIN_HINT_TOKEN_TTL_SECONDS,
      jti: newOpaqueId(),
    };
    const token = jwt.sign(claims, this.key, {
      algorithm: 'HS256',
      header: { alg: 'HS256', typ: LOGIN_HINT_TOKEN_TYP },
    });
    return { ...claims, token };
  }

  /**
   * A hint this server made (typ login-hint+jwt, HS256 with its key, its issuer, string aud and sub), or why
   * not: `expired` (CIBA Core §13: expired_login_hint_token), `invalid` otherwise.
   */
  verify(token: string): LoginHintCheck {
    const decoded = token.length <= 4096 ? jwt.decode(token, { complete: true }) : null;
    if (!decoded || typeof decoded.payload === 'string' || decoded.header.typ !== LOGIN_HINT_TOKEN_TYP)
      return { ok: false, reason: 'invalid' };
    try {
      jwt.verify(token, this.key, {
        algorithms: ['HS256'],
        issuer: this.options.issuer,
        clockTimestamp: this.nowSeconds(),
      });
    } catch (err) {
      return { ok: false, reason: err instanceof jwt.TokenExpiredError ? 'expired' : 'invalid' };
    }
    const payload = decoded.payload as Partial<LoginHintClaims>;
    if (
      typeof payload.sub !== 'string' ||
      typeof payload.aud !== 'string' ||
      typeof payload.iat !== 'number' ||
      typeof payload.exp !== 'number' ||
      typeof payload.jti !== 'string'
    )
      return { ok: false, reason: 'invalid' };
    return { ok: true, claims: payload as LoginHintClaims };
  }
}
