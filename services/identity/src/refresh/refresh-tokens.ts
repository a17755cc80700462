import { AppError, constantTimeEqual, type AuditActor, type AuditLog, type Logger } from '@attest/common';
import type { App } from '../kernel/app-store';
import { sha256 } from '../kernel/crypto';
import type { ConsentDirectory, UserDirectory } from '../kernel/directories';
import { newOpaqueId } from '../kernel/ids';
import { consentKey, type Revocations } from '../kernel/revocations';
import type { TokenService } from '../kernel/tokens';
import { boundAtToken, type ExchangedGrant, type TokenResponse } from '../oauth';
import { refreshGrantHolds, type ResourceDirectory } from '../resources';
import { FreshRecords } from './fresh-records';
import { RotationBatcher } from './rotation-batcher';
import type { RefreshGrant, RefreshRecord, RefreshStore } from './refresh-store';

const PRUNE_EVERY_MS = 10 * 60 * 1000;
const REFRESH_TOKEN = /^[0-9a-f]{64}$/;

export interface RefreshOptions {
  /** REFRESH_TOKEN_TTL_SECONDS: a family's absolute lifetime. */
  ttlSeconds: number;
  now: () => number;
}

export interface RefreshDeps {
  tokens: Pick<TokenService, 'accessToken' | 'accessTokenTtl'>;
  revocations: Pick<Revocations, 'isRevoked' | 'revokedBeforeIssue' | 'revoke'>;
  users: Pick<UserDirectory, 'findById'>;
  consents: Pick<ConsentDirectory, 'find'>;
  /** The registered resources, to know a family's resource is still the one it was granted for. */
  resources: Pick<ResourceDirectory, 'findByUri'>;
  audit: Pick<AuditLog, 'record'>;
  logger: Logger;
}

/** POST /token grant_type=refresh_token, for an authenticated app. */
interface RefreshInput {
  app: App;
  token: string;
  /** The thumbprint of the request's verified DPoP proof. */
  dpopJkt?: string;
  scope?: string;
  resource?: string;
  actor: AuditActor;
}

const invalidGrant = (detail = 'Invalid refresh token.') => new AppError('invalid_grant', 400, detail, 'refresh_token');

/**
 * Refresh tokens (issue 41, RFC 6749 §6, RFC 9700 §4.14): given with a code's exchange when offline_access
 * was asked for; stored as a SHA-256; each used once and replaced (rotation), within the family's absolute
 * lifetime; bound to the DPoP key of the exchange when it had one. A used token presented again by a public
 * client ends its family (RFC 9700 §4.14.2) and revokes the access tokens the family gave.
 */
export class RefreshTokens {
  private pruner?: NodeJS.Timeout;
  private readonly fresh = new FreshRecords();
  private readonly rotations: RotationBatcher;

  constructor(
    private readonly store: RefreshStore,
    private readonly deps: RefreshDeps,
    private readonly options: RefreshOptions,
  ) {
    this.rotations = new RotationBatcher((batch) => store.rotateMany(batch));
  }

  start(): void {
    this.pruner = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruner.unref();
  }

  stop(): void {
    clearInterval(this.pruner);
  }

  /** The refresh token of a code's exchange, when offline_access was asked for: a new family. */
  readonly issue = async (grant: ExchangedGrant): Promise<string | undefined> => {
    if (!grant.offlineAccess) return undefined;
    const now = this.options.now();
    return this.insert({
      familyId: newOpaqueId(),
      clientId: grant.clientId,
      userId: grant.userId,
      sid: grant.sid ?? null,
      jkt: grant.jkt ?? null,
      accessJti: grant.accessJti,
      expiresAt: new Date(now + this.options.ttlSeconds * 1000),
      grant: {
        sub: grant.sub,
        scopes: grant.scopes,
        ...(grant.resource ? { resource: grant.resource } : {}),
        acr: grant.acr,
        ...(grant.amr ? { amr: grant.amr } : {}),
        authTime: grant.authTime,
        familyIat: Math.floor(now / 1000),
      },
    });
  };

  /** POST /token grant_type=refresh_token for an authenticated app. */
  async refresh(input: RefreshInput): Promise<TokenResponse> {
    if (!REFRESH_TOKEN.test(input.token)) throw invalidGrant();
    const hash = sha256(input.token);
    // a token this process issued: its record as it was stored, the lookup skipped; when anything refuses
    // (or the rotation finds the row used or gone) the stored row decides, as if it had been looked up
    const remembered = this.fresh.take(hash);
    if (remembered) {
      const answer = await this.answer(remembered, hash, input, false).catch(() => undefined);
      if (answer) return answer;
    }
    // from the stored row, the answer is a token or a refusal (never undefined)
    return (await this.answer(await this.store.find(hash), hash, input, true))!;
  }

  /**
   * The checks and the rotation for `record` (null: no such token). `stored`: the record was just looked up;
   * otherwise it is remembered, and a rotation that finds the row used or gone answers undefined instead of
   * ending anything (the caller then decides from the stored row).
   */
  private async answer(
    record: RefreshRecord | null,
    hash: string,
    input: RefreshInput,
    stored: boolean,
  ): Promise<TokenResponse | undefined> {
    if (!record || record.clientId !== input.app.id) throw invalidGrant();
    if (record.usedAt) {
      if (input.app.public) await this.endFamily(record.familyId, input.app.id, input.actor);
      throw invalidGrant('This refresh token was used already.');
    }
    if (record.expiresAt.getTime() <= this.options.now()) throw invalidGrant('This refresh token has expired.');
    const { grant } = record;
    // its session ended (sign-out, a password change), the person gone or disabled, the consent withdrawn
    if (record.sid !== null && (await this.deps.revocations.isRevoked('', record.sid))) throw invalidGrant();
    const user = await this.deps.users.findById(record.userId);
    if (!user || user.disabledAt) throw invalidGrant();
    if (this.deps.revocations.revokedBeforeIssue(consentKey(user.id, record.clientId), grant.familyIat))
      throw invalidGrant();
    // the consent still covers the grant (its resource and each of its scopes), and its resource is the one
    // registered now under its uri (not one deleted, or deleted and registered again): refreshGrantHolds
    const granted = await this.deps.consents.find(user.id, record.clientId);
    if (!(await refreshGrantHolds(this.deps.resources, granted, grant.resource, grant.familyIat))) throw invalidGrant();
    // RFC 9449 §5: a DPoP-bound grant is refreshed only with a proof by its key
    if (record.jkt !== null && (input.dpopJkt === undefined || !constantTimeEqual(record.jkt, input.dpopJkt)))
      throw new AppError(
        'invalid_dpop_proof',
        400,
        'This refresh token is DPoP-bound: the DPoP proof must be signed by the key it is bound to.',
        'DPoP',
      );
    const resource = boundAtToken(grant.resource, input.resource);
    const scopes = narrowed(resource ? resource.scopes : grant.scopes, input.scope);
    const jkt = record.jkt ?? input.dpopJkt;
    // signed before the rotation, which stores the successor with this token's jti in the same statement
    // that marks the one presented used (one commit, shared with the rotations asked for meanwhile); a
    // rotation that loses a race answers no token
    const { token, claims } = await this.deps.tokens.accessToken({
      sub: grant.sub,
      clientId: record.clientId,
      scopes,
      ...(record.sid ? { sid: record.sid } : {}),
      ...(jkt ? { jkt } : {}),
      signIn: { acr: grant.acr, ...(grant.amr ? { amr: grant.amr } : {}), authTime: grant.authTime },
      ...(resource ? { aud: resource.uri } : {}),
      // the app's access token algorithm, as at the code exchange (PS256 or ES256 for a fapi2 app)
      alg: input.app.accessTokenSignedResponseAlg,
    });
    const refreshToken = newOpaqueId();
    const next = {
      tokenHash: sha256(refreshToken),
      familyId: record.familyId,
      clientId: record.clientId,
      userId: record.userId,
      sid: record.sid,
      jkt: record.jkt,
      accessJti: claims.jti,
      expiresAt: record.expiresAt,
      grant,
    };
    const rotated = await this.rotations.rotate({ usedHash: hash, nextHash: next.tokenHash, accessJti: claims.jti });
    if (!rotated) {
      if (!stored) return undefined;
      if (input.app.public) await this.endFamily(record.familyId, input.app.id, input.actor);
      throw invalidGrant('This refresh token was used already.');
    }
    this.fresh.add({ ...next, usedAt: null });
    return {
      access_token: token,
      token_type: jkt ? 'DPoP' : 'Bearer',
      expires_in: this.deps.tokens.accessTokenTtl,
      scope: claims.scope,
      refresh_token: refreshToken,
    } as TokenResponse;
  }

  /**
   * RFC 7009 at /revoke: a refresh token of this app ends its whole family (every token rotated from the same
   * grant, and the access tokens they gave, RFC 7009 §2.1); true when it was one. Another app's token, an
   * unknown or malformed one: false, and nothing changes.
   */
  readonly revoke = async (token: string, app: Pick<App, 'id'>, actor: AuditActor): Promise<boolean> => {
    if (!REFRESH_TOKEN.test(token)) return false;
    const record = await this.store.find(sha256(token));
    if (!record || record.clientId !== app.id) return false;
    await this.endFamily(record.familyId, app.id, actor, 'refresh_token_revoked');
    return true;
  };

  /** Sessions ended: their families end (in the caller's transaction, through refreshStore(tx)). */
  static endForSids(store: RefreshStore, sids: string[]): Promise<number> {
    return store.endForSids(sids);
  }

  /** A consent withdrawn: the person's families for the app end. */
  async endFor(userId: string, clientId: string): Promise<void> {
    await this.store.endFor(userId, clientId);
  }

  private async insert(r: {
    familyId: string;
    clientId: string;
    userId: string;
    sid: string | null;
    jkt: string | null;
    accessJti: string;
    expiresAt: Date;
    grant: RefreshGrant;
  }): Promise<string> {
    const token = newOpaqueId();
    const record = { ...r, tokenHash: sha256(token) };
    await this.store.insert(record);
    this.fresh.add({ ...record, usedAt: null });
    return token;
  }

  private async endFamily(
    familyId: string,
    clientId: string,
    actor: AuditActor,
    reason: 'refresh_token_reused' | 'refresh_token_revoked' = 'refresh_token_reused',
  ): Promise<void> {
    const jtis = await this.store.endFamily(familyId);
    await this.deps.revocations.revoke(jtis, new Date(this.options.now() + this.deps.tokens.accessTokenTtl * 1000));
    await this.deps.audit.record({
      type: 'token.revoked',
      actor,
      subject: clientId,
      detail: { reason, token_ids: jtis },
    });
  }

  private async prune(): Promise<void> {
    try {
      const removed = await this.store.prune();
      if (removed) this.deps.logger.info('expired refresh tokens pruned', { rows: removed });
    } catch (err) {
      this.deps.logger.warn('refresh tokens not pruned', { error: (err as Error).message });
    }
  }
}

/** RFC 6749 §6: `scope` at refresh may narrow what was granted, never widen it (invalid_scope). */
function narrowed(granted: string[], scope: string | undefined): string[] {
  if (scope === undefined) return granted;
  const asked = [...new Set(scope.split(' ').filter(Boolean))];
  const extra = asked.find((s) => s !== 'offline_access' && !granted.includes(s));
  if (extra !== undefined)
    throw new AppError(
      'invalid_scope',
      400,
      `scope may only narrow the grant: ${extra} was not granted (granted: ${granted.join(' ') || 'none'}).`,
      'scope',
    );
  return granted.filter((s) => asked.includes(s));
}
