import { createHash } from 'node:crypto';
import { AppError, constantTimeEqual, type AuditActor, type AuditLog, type Cache } from '@attest/common';
import type { User } from '../kernel/user-store';
import type { SigningAlg } from '../kernel/app-store';
import type { SubjectDirectory, UserDirectory } from '../kernel/directories';
import { FAPI2_CODE_TTL_SECONDS } from '../kernel/app-profile';
import type { AuthorizationRequest } from './authorization-request';
import { acrOf, userinfoSignInClaims } from './assurance';
import { userClaims } from './claims';
import { halfHash, sha256 } from '../kernel/crypto';
import { newAuthorizationCode, pairwiseSid, pairwiseSubject } from '../kernel/ids';
import type { Revocations } from '../kernel/revocations';
import type { Session } from '../kernel/sessions';
import type { TokenService } from '../kernel/tokens';
import { ResourceIndicatorError, resourceAtToken, type BoundResource } from '../resources';
import type { ApprovedGrant, RefreshIssuer, TokenResponse } from './grant-types';

export type { ApprovedGrant, ExchangedGrant, RefreshIssuer, TokenResponse } from './grant-types';

interface CodeRecord extends ApprovedGrant {
  redirectUri: string;
  codeChallenge?: string;
  /** Access tokens issued with the code at /authorize (hybrid flows): revoked too on replay. */
  jtis: string[];
  /** The authorization request's dpop_jkt: the code is redeemed only with a proof by that key. */
  dpopJkt?: string;
}

/** What the id_token says about the sign-in behind it. */
interface SignInClaims {
  acr: string;
  authTime: number;
  amr?: string[];
  sid?: string;
}

export interface GrantsOptions {
  issuer: string;
  emailDomain: string;
  secret: string;
  codeTtlSeconds: number;
}

const invalidGrant = (detail: string, attribute = 'code') => new AppError('invalid_grant', 400, detail, attribute);

/** resourceAtToken, its refusal as /token answers it (RFC 8707 §2.2: invalid_target). */
export function boundAtToken(granted: BoundResource | undefined, asked: string | undefined): BoundResource | undefined {
  try {
    return resourceAtToken(granted, asked);
  } catch (err) {
    if (err instanceof ResourceIndicatorError) throw new AppError(err.error, 400, err.description, 'resource');
    throw err;
  }
}

const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** Codes, tokens and revocations: what /authorize hands out and /token exchanges. */
export class Grants {
  constructor(
    private readonly cache: Cache,
    private readonly tokens: TokenService,
    private readonly users: Pick<UserDirectory, 'findById'>,
    private readonly subjects: Pick<SubjectDirectory, 'remember'>,
    private readonly revocations: Revocations,
    private readonly options: GrantsOptions,
    private readonly audit?: Pick<AuditLog, 'record'>,
    /** Refresh tokens (issue 41); without it, no exchange gives one. */
    private readonly refresh?: RefreshIssuer,
    /**
     * Whether a grant's resource is still the one registered under its uri (resources' grantResourceRegistered);
     * without it, every grant's resource is taken as it is.
     */
    private readonly resourceRegistered?: (resource: BoundResource) => Promise<boolean>,
  ) {}

  async subjectFor(appId: string, userId: string): Promise<string> {
    const sub = pairwiseSubject(this.options.secret, appId, userId);
    await this.subjects.remember(appId, sub, userId);
    return sub;
  }

  /** The values /authorize returns for an approved request: code, access_token and/or id_token. */
  async authorize(request: AuthorizationRequest, session: Session): Promise<Record<string, string>> {
    const user = await this.users.findById(session.userId);
    if (!user || user.disabledAt)
      throw new AppError('login_required', 400, 'The signed-in user no longer exists or is disabled.');
    const types = request.responseType.split(' ');
    const sub = await this.subjectFor(request.clientId, user.id);
    const signIn: SignInClaims = {
      acr: acrOf(user.verificationLevel),
      authTime: session.authTime,
      amr: session.amr,
      sid: pairwiseSid(this.options.secret, request.clientId, session.id),
    };
    const userinfoClaims = userinfoSignInClaims(request.claims);
    const out: Record<string, string> = {};
    const jtis: string[] = [];
    if (types.includes('token')) {
      const { token, claims } = await this.tokens.accessToken({
        sub,
        clientId: request.clientId,
        sid: signIn.sid,
        signIn,
        ...(request.resource
          ? { aud: request.resource.uri, scopes: request.resource.scopes }
          : { scopes: request.scopes, userinfoClaims }),
        alg: request.accessTokenAlg,
      });
      Object.assign(out, { access_token: token, token_type: 'Bearer', expires_in: String(this.tokens.accessTokenTtl) });
      jtis.push(claims.jti);
    }
    if (types.includes('code')) {
      const code = newAuthorizationCode();
      const record: CodeRecord = {
        clientId: request.clientId,
        userId: user.id,
        sub,
        redirectUri: request.redirectUri,
        scopes: request.scopes,
        nonce: request.nonce,
        codeChallenge: request.codeChallenge,
        authTime: session.authTime,
        amr: signIn.amr,
        acr: signIn.acr,
        ...(userinfoClaims.length ? { userinfoClaims } : {}),
        sid: signIn.sid,
        jtis,
        ...(request.idTokenAlg ? { idTokenAlg: request.idTokenAlg } : {}),
        ...(request.dpopJkt ? { dpopJkt: request.dpopJkt } : {}),
        ...(request.resource ? { resource: request.resource } : {}),
        ...(request.offlineAccess ? { offlineAccess: true as const } : {}),
      };
      // FAPI 2.0 §5.3.1.2: at most 60 s, whatever CODE_TTL_SECONDS says
      const ttl =
        request.profile === 'fapi2'
          ? Math.min(this.options.codeTtlSeconds, FAPI2_CODE_TTL_SECONDS)
          : this.options.codeTtlSeconds;
      await this.cache.set(`code:${sha256(code)}`, JSON.stringify(record), ttl * 1000);
      out.code = code;
    }
    if (types.includes('id_token')) {
      out.id_token = await this.idToken(
        user,
        sub,
        request.clientId,
        request.scopes,
        signIn,
        request.nonce,
        {
          at_hash: out.access_token ? halfHash(out.access_token) : undefined,
          c_hash: out.code ? halfHash(out.code) : undefined,
        },
        request.idTokenAlg,
      );
    }
    if (request.state !== undefined) out.state = request.state;
    return out;
  }

  /** /token: single use; a replayed code fails and revokes every token issued from it. */
  async exchangeCode(input: {
    clientId: string;
    code: string;
    redirectUri: string;
    codeVerifier?: string;
    /** The thumbprint of the key of the request's verified DPoP proof: the tokens are bound to it. */
    dpopJkt?: string;
    /** RFC 8707 §2.2: the resource asked for at /token (the authorization request's, or absent). */
    resource?: string;
    /** The app's access_token_signed_response_alg (RS256 unless set). */
    accessTokenAlg?: SigningAlg;
    actor?: AuditActor;
  }): Promise<TokenResponse> {
    if (!/^[0-9a-f]{64}$/.test(input.code)) throw invalidGrant('Invalid authorization code.');
    const key = sha256(input.code);
    const raw = await this.cache.take(`code:${key}`);
    if (!raw) {
      await this.revokeReplayed(key, input);
      throw invalidGrant('Invalid authorization code.');
    }
    const record = JSON.parse(raw) as CodeRecord;
    if (record.clientId !== input.clientId) throw invalidGrant('Invalid authorization code.');
    if (record.redirectUri !== input.redirectUri)
      throw invalidGrant('redirect_uri does not match the one used at the authorization endpoint.', 'redirect_uri');
    this.checkPkce(record.codeChallenge, input.codeVerifier);
    const resource = boundAtToken(record.resource, input.resource);
    // RFC 9449 §10: a code asked for with dpop_jkt is redeemed only with a proof by that key
    if (
      record.dpopJkt !== undefined &&
      (input.dpopJkt === undefined || !constantTimeEqual(record.dpopJkt, input.dpopJkt))
    )
      throw new AppError(
        'invalid_dpop_proof',
        400,
        'The DPoP proof must be signed by the key named by dpop_jkt in the authorization request.',
        'DPoP',
      );

    const user = await this.users.findById(record.userId);
    if (!user || user.disabledAt) throw invalidGrant('Invalid authorization code.');
    // the session it was issued in has ended since (sign-out, a password change or reset, an operator):
    // its tokens would be inactive, and its id_token would sign someone in whose session was ended
    if (record.sid !== undefined && (await this.revocations.isRevoked('', record.sid)))
      throw invalidGrant('Invalid authorization code.');
    return this.issue(record, user, {
      resource,
      dpopJkt: input.dpopJkt,
      accessTokenAlg: input.accessTokenAlg,
      // Durable before the tokens leave: a replay after a cache loss must still find what to revoke.
      beforeRelease: (claims) =>
        this.revocations.recordUsedCode(key, {
          jtis: [...record.jtis, claims.jti],
          expiresAt: new Date(claims.exp * 1000),
        }),
    });
  }

  /**
   * The tokens of an approved grant, once it was redeemed (a code exchanged, a device code polled): an
   * access token (for its resource when it has one, bound to the DPoP key when a proof came), an id_token
   * when openid was granted, a refresh token when offline_access was. The caller has checked the person
   * and the session are still there. `beforeRelease` runs before the tokens are returned.
   */
  async issue(
    record: ApprovedGrant,
    user: User,
    input: {
      /** The resource of the token (the grant's, checked against the one asked for at /token). */
      resource: BoundResource | undefined;
      dpopJkt?: string;
      accessTokenAlg?: SigningAlg;
      beforeRelease?: (claims: { jti: string; exp: number }) => Promise<void>;
    },
  ): Promise<TokenResponse> {
    const { resource } = input;
    // a security review: approved for a resource deleted since (perhaps registered again with its uri), no token
    if (resource && this.resourceRegistered && !(await this.resourceRegistered(resource)))
      throw new AppError(
        'invalid_grant',
        400,
        'The resource this grant was approved for is no longer registered: ask the person again.',
        'resource',
      );
    // a grant made before acr existed (a rolling upgrade) states the level the person has now
    const signIn: SignInClaims = {
      acr: record.acr ?? acrOf(user.verificationLevel),
      authTime: record.authTime,
      amr: record.amr,
      sid: record.sid,
    };
    const { token, claims } = await this.tokens.accessToken({
      sub: record.sub,
      clientId: record.clientId,
      sid: record.sid,
      jkt: input.dpopJkt,
      signIn,
      ...(resource
        ? { aud: resource.uri, scopes: resource.scopes }
        : { scopes: record.scopes, userinfoClaims: record.userinfoClaims }),
      alg: input.accessTokenAlg,
    });
    const [, idToken] = await Promise.all([
      input.beforeRelease?.(claims),
      record.scopes.includes('openid')
        ? this.idToken(
            user,
            record.sub,
            record.clientId,
            record.scopes,
            signIn,
            record.nonce,
            { at_hash: halfHash(token) },
            record.idTokenAlg,
          )
        : undefined,
    ]);
    const refreshToken = await this.refresh?.({
      clientId: record.clientId,
      userId: record.userId,
      sub: record.sub,
      sid: record.sid,
      scopes: record.scopes,
      resource: record.resource,
      jkt: input.dpopJkt,
      acr: signIn.acr,
      amr: signIn.amr,
      authTime: signIn.authTime,
      accessJti: claims.jti,
      offlineAccess: record.offlineAccess === true,
    });
    return {
      access_token: token,
      token_type: input.dpopJkt ? 'DPoP' : 'Bearer',
      expires_in: this.tokens.accessTokenTtl,
      scope: claims.scope,
      ...(idToken ? { id_token: idToken } : {}),
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
    };
  }

  private async revokeReplayed(codeKey: string, input: { clientId: string; actor?: AuditActor }): Promise<void> {
    const used = await this.revocations.usedCode(codeKey);
    if (!used) return;
    await this.revocations.revoke(used.jtis, used.expiresAt);
    await this.audit?.record({
      type: 'token.revoked',
      actor: input.actor ?? { type: 'anonymous', id: null },
      subject: input.clientId,
      detail: { reason: 'authorization_code_replayed', token_ids: used.jtis },
    });
  }

  private checkPkce(challenge: string | undefined, verifier: string | undefined): void {
    if (!challenge) {
      if (verifier !== undefined)
        throw invalidGrant(
          'code_verifier was sent but the authorization request had no code_challenge.',
          'code_verifier',
        );
      return;
    }
    if (verifier === undefined) throw new AppError('required', 400, 'This attribute is required.', 'code_verifier');
    if (!PKCE_VERIFIER.test(verifier)) throw invalidGrant('code_verifier is malformed.', 'code_verifier');
    const computed = createHash('sha256').update(verifier, 'ascii').digest('base64url');
    if (!constantTimeEqual(computed, challenge))
      throw invalidGrant('code_verifier does not match the code_challenge.', 'code_verifier');
  }

  private idToken(
    user: User,
    sub: string,
    clientId: string,
    scopes: string[],
    signIn: SignInClaims,
    nonce: string | undefined,
    hashes: { at_hash?: string; c_hash?: string },
    alg: 'RS256' | 'PS256' | 'ES256' = 'RS256',
  ): Promise<string> {
    const claims = userClaims(this.options.issuer, this.options.emailDomain, sub, user, scopes);
    return this.tokens.idToken(
      {
        ...claims,
        sub,
        aud: clientId,
        auth_time: signIn.authTime,
        acr: signIn.acr,
        ...(signIn.amr ? { amr: signIn.amr } : {}),
        ...(signIn.sid ? { sid: signIn.sid } : {}),
        ...(nonce === undefined ? {} : { nonce }),
        ...(hashes.at_hash ? { at_hash: hashes.at_hash } : {}),
        ...(hashes.c_hash ? { c_hash: hashes.c_hash } : {}),
      },
      alg,
    );
  }
}
