import { createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { decrypt, encrypt } from '@attest/common';
import { newOpaqueId, pairwiseSubject } from '../kernel/ids';

/** CIBA Core §7.1's login_hint_token as Attest issues it: a JWT of its own type, never taken as another token. */
export const LOGIN_HINT_TOKEN_TYP = 'login-hint+jwt';

/** How long a login_hint_token names the person (30 days); ending the agent on the account page stops it sooner. */
export const LOGIN_HINT_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

/**
 * A login_hint_token's claims: the app it names the person to (`aud`), and the person as `ref`, their account
 * sealed (AES-256-GCM) for Attest alone. Not their `sub`: an agent that read it could name them with
 * login_hint, which no end of the agent stops.
 */
interface LoginHintClaims {
  iss: string;
  aud: string;
  ref: string;
  iat: number;
  exp: number;
  jti: string;
}

/** The person a hint names (their account, and their pairwise sub for the app), and when it was made. */
export type LoginHintCheck =
  { ok: true; userId: string; sub: string; iat: number } | { ok: false; reason: 'expired' | 'invalid' | 'ended' };

/**
 * CIBA Core §7.1's login_hint_token as Attest issues it: a JWT (typ login-hint+jwt), MACed (HS256) with a key
 * derived from IDENTITY_SECRET, which only Attest holds, the person sealed in it. Not signed with the rotating
 * keys of /jwks: a key retired after 21 days would end a hint made for 30. The secret also keys the pairwise
 * subjects, so a hint lives exactly as long as the `sub` it stands for.
 */
export class LoginHintTokens {
  private readonly key: Buffer;
  /** What seals the person's account in a hint (encrypt/decrypt derive an AES-256-GCM key of it). */
  private readonly sealKey: string;

  constructor(
    private readonly options: {
      issuer: string;
      secret: string;
      /** The tokens' clock (tests move it on). */
      now: () => number;
      /** The delegation feature's: whether the agent a hint was made for still acts for the person. */
      agents: { namedSince(userId: string, agentId: string, issuedAt: number): Promise<boolean> };
    },
  ) {
    this.key = createHmac('sha256', options.secret).update('login_hint_token:v1').digest();
    this.sealKey = `login_hint_token:${options.secret}`;
  }

  private nowSeconds(): number {
    return Math.floor(this.options.now() / 1000);
  }

  /** A hint naming the person (their account, sealed) to the app `aud`. */
  issue(input: { aud: string; userId: string }): { token: string; iat: number; exp: number } {
    const iat = this.nowSeconds();
    const claims: LoginHintClaims = {
      iss: this.options.issuer,
      aud: input.aud,
      ref: encrypt(this.sealKey, input.userId),
      iat,
      exp: iat + LOGIN_HINT_TOKEN_TTL_SECONDS,
      jti: newOpaqueId(),
    };
    const token = jwt.sign(claims, this.key, {
      algorithm: 'HS256',
      header: { alg: 'HS256', typ: LOGIN_HINT_TOKEN_TYP },
    });
    return { token, iat, exp: claims.exp };
  }

  /**
   * A hint this server made for the app `aud` (typ login-hint+jwt, HS256 with its key, its issuer, this app, the
   * person sealed in it), or why not: `invalid`, then `expired` (CIBA Core §13: expired_login_hint_token) once
   * it is known to be this app's.
   */
  verify(token: string, aud: string): LoginHintCheck {
    const decoded = token.length <= 4096 ? jwt.decode(token, { complete: true }) : null;
    if (!decoded || typeof decoded.payload === 'string' || decoded.header.typ !== LOGIN_HINT_TOKEN_TYP)
      return { ok: false, reason: 'invalid' };
    try {
      jwt.verify(token, this.key, { algorithms: ['HS256'], issuer: this.options.issuer, ignoreExpiration: true });
    } catch {
      return { ok: false, reason: 'invalid' };
    }
    const payload = decoded.payload as Partial<LoginHintClaims>;
    if (
      payload.aud !== aud ||
      typeof payload.ref !== 'string' ||
      typeof payload.iat !== 'number' ||
      typeof payload.exp !== 'number'
    )
      return { ok: false, reason: 'invalid' };
    if (this.nowSeconds() >= payload.exp) return { ok: false, reason: 'expired' };
    let userId: string;
    try {
      userId = decrypt(this.sealKey, payload.ref);
    } catch {
      return { ok: false, reason: 'invalid' };
    }
    return { ok: true, userId, sub: pairwiseSubject(this.options.secret, aud, userId), iat: payload.iat };
  }

  /** verify, then whether the person has ended the agent since the hint was made (`ended`). */
  async check(token: string, aud: string): Promise<LoginHintCheck> {
    const verified = this.verify(token, aud);
    if (!verified.ok) return verified;
    return (await this.options.agents.namedSince(verified.userId, aud, verified.iat))
      ? verified
      : { ok: false, reason: 'ended' };
  }
}
