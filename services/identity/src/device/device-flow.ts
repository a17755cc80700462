import { AppError, type AuditActor, type AuditLog, type Logger } from '@attest/common';
import type { App } from '../kernel/app-store';
import type { ConsentDirectory, UserDirectory } from '../kernel/directories';
import { pairwiseSid } from '../kernel/ids';
import { consentKey, type Revocations } from '../kernel/revocations';
import type { Session, Sessions } from '../kernel/sessions';
import type { User } from '../kernel/user-store';
import {
  acrOf,
  boundAtToken,
  consentScopes,
  essentialAcr,
  unmetDemand,
  userinfoSignInClaims,
  type ApprovedGrant,
  type Grants,
  type TokenResponse,
} from '../oauth';
import type { ResourceDirectory } from '../resources';
import { codeHash, DEVICE_CODE, newDeviceCode, newUserCode, normaliseUserCode } from './device-codes';
import { deviceRequest, type DeviceAuthorizationFields } from './device-request';
import type { DeviceAuthorization, DeviceStore } from './device-store';

/** RFC 8628 §3.2: the interval a device waits between polls, unless told to slow down. */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
const PRUNE_EVERY_MS = 10 * 60 * 1000;

export interface DeviceFlowDeps {
  store: DeviceStore;
  grants: Pick<Grants, 'subjectFor' | 'issue'>;
  users: Pick<UserDirectory, 'findById'>;
  consents: Pick<ConsentDirectory, 'grant'>;
  sessions: Pick<Sessions, 'recordClient'>;
  revocations: Pick<Revocations, 'pastRevocationOf' | 'isRevoked'>;
  resources: Pick<ResourceDirectory, 'findByUri'>;
  audit: Pick<AuditLog, 'record'>;
  logger: Logger;
}

export interface DeviceFlowOptions {
  issuer: string;
  secret: string;
  /** DEVICE_CODE_TTL_SECONDS. */
  ttlSeconds: number;
  now: () => number;
}

/** RFC 8628 §3.2: the answer of /device_authorization. */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** Why a person cannot approve: the level asked for and theirs (the page says it). */
export interface UnmetLevel {
  wanted: string;
  has: string;
  description: string;
}

const pollError = (code: string, detail: string) => new AppError(code, 400, detail, 'device_code');

/**
 * The Device Authorization Grant (RFC 8628; issue 41): a device without a browser asks for a pair of codes,
 * the person types the user code at /device, signs in and approves or denies, and the device polls /token
 * with the device code until it has the tokens (once) or an answer that ends it.
 */
export class DeviceFlow {
  private pruner?: NodeJS.Timeout;

  constructor(
    private readonly deps: DeviceFlowDeps,
    private readonly options: DeviceFlowOptions,
  ) {}

  start(): void {
    this.pruner = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruner.unref();
  }

  stop(): void {
    clearInterval(this.pruner);
  }

  /** POST /device_authorization for an authenticated app allowed the grant. */
  async begin(app: App, fields: DeviceAuthorizationFields): Promise<DeviceAuthorizationResponse> {
    const request = await deviceRequest(this.deps.resources, app, fields);
    const now = this.options.now();
    const deviceCode = newDeviceCode();
    // a user code is drawn again in the rare case its hash is taken by another waiting authorization
    for (let attempt = 0; attempt < 5; attempt++) {
      const userCode = newUserCode();
      const inserted = await this.deps.store.insert({
        deviceCodeHash: codeHash(this.options.secret, 'device', deviceCode),
        userCodeHash: codeHash(this.options.secret, 'user', userCode),
        clientId: app.id,
        request,
        intervalSeconds: DEVICE_POLL_INTERVAL_SECONDS,
        createdAt: new Date(now),
        expiresAt: new Date(now + this.options.ttlSeconds * 1000),
      });
      if (!inserted) continue;
      const verificationUri = `${this.options.issuer}/device`;
      return {
        device_code: deviceCode,
        user_code: userCode,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${userCode}`,
        expires_in: this.options.ttlSeconds,
        interval: DEVICE_POLL_INTERVAL_SECONDS,
      };
    }
    throw new AppError('unavailable', 503, 'No user code could be drawn; try again.');
  }

  /** The authorization waiting for the person that a typed user code names, or null. */
  async pending(typed: unknown): Promise<(DeviceAuthorization & { userCode: string }) | null> {
    const userCode = normaliseUserCode(typed);
    if (!userCode) return null;
    const found = await this.deps.store.findPending(
      codeHash(this.options.secret, 'user', userCode),
      new Date(this.options.now()),
    );
    return found && { ...found, userCode };
  }

  /**
   * What keeps this person from approving: a verification level the request (an essential acr in its
   * claims) or the app or resource (a minimum) demands and they do not have. Null when nothing does.
   */
  unmetLevel(record: DeviceAuthorization, user: User): UnmetLevel | null {
    const acr = essentialAcr(record.request.claims);
    if (!acr && !record.request.minLevel) return null;
    const unmet = unmetDemand(user.verificationLevel, { acr, minLevel: record.request.minLevel });
    return unmet && { wanted: unmet.wanted, has: user.verificationLevel, description: unmet.error.description };
  }

  /**
   * The person approves: their consent is recorded as at /authorize (the OpenID scopes, the resource and
   * `<resource>#<scope>`), the session remembers the app (its end ends the tokens), and the grant waits
   * for the device's next poll. False when the authorization was decided already or has expired.
   */
  async approve(
    record: DeviceAuthorization,
    app: App,
    who: { user: User; session: Session },
    actor: AuditActor,
  ): Promise<boolean> {
    const { user, session } = who;
    const { request } = record;
    const grant: ApprovedGrant = {
      clientId: app.id,
      userId: user.id,
      sub: await this.deps.grants.subjectFor(app.id, user.id),
      scopes: request.scopes,
      authTime: session.authTime,
      amr: session.amr,
      acr: acrOf(user.verificationLevel),
      sid: pairwiseSid(this.options.secret, app.id, session.id),
      ...(request.claims && userinfoSignInClaims(request.claims).length
        ? { userinfoClaims: userinfoSignInClaims(request.claims) }
        : {}),
      ...(app.idTokenSignedResponseAlg === 'RS256' ? {} : { idTokenAlg: app.idTokenSignedResponseAlg }),
      ...(request.resource ? { resource: request.resource } : {}),
      ...(request.offlineAccess ? { offlineAccess: true as const } : {}),
    };
    // the person's pairwise identifier is always given (the token's sub): openid is consented to with it
    const scopes = consentScopes({
      scopes: [...new Set(['openid' as const, ...request.scopes])],
      resource: request.resource,
      offlineAccess: request.offlineAccess,
    });
    await this.deps.revocations.pastRevocationOf(consentKey(user.id, app.id), this.options.now);
    await this.deps.sessions.recordClient(session, app.id);
    const decided = await this.deps.store.decide(
      record.deviceCodeHash,
      { status: 'approved', userId: user.id, grant },
      new Date(this.options.now()),
    );
    if (!decided) return false;
    await this.deps.consents.grant(user.id, app.id, scopes);
    await this.deps.audit.record({
      type: 'consent.granted',
      actor,
      subject: user.id,
      detail: { app_id: app.id, scopes },
    });
    await this.audited('device.approved', record, user.id, actor);
    return true;
  }

  /** The person denies: the device's next poll is access_denied. False when it was decided already. */
  async deny(record: DeviceAuthorization, userId: string, actor: AuditActor): Promise<boolean> {
    const decided = await this.deps.store.decide(
      record.deviceCodeHash,
      { status: 'denied', userId, grant: null },
      new Date(this.options.now()),
    );
    if (decided) await this.audited('device.denied', record, userId, actor);
    return decided;
  }

  /**
   * POST /token with the device code (RFC 8628 §3.4, §3.5): authorization_pending while the person has not
   * decided, slow_down when polled sooner than the interval (which grows by 5 s each time), access_denied,
   * expired_token; the tokens once, on the first poll after the approval; invalid_grant for a code that is
   * unknown, another client's or redeemed.
   */
  async poll(app: App, deviceCode: string, input: { dpopJkt?: string; resource?: string }): Promise<TokenResponse> {
    const unknown = () => pollError('invalid_grant', 'Unknown, used or another client’s device_code.');
    if (!DEVICE_CODE.test(deviceCode)) throw unknown();
    const now = this.options.now();
    const hash = codeHash(this.options.secret, 'device', deviceCode);
    const polled = await this.deps.store.poll(hash, app.id, new Date(now));
    if (!polled) throw unknown();
    const { record, slowDown } = polled;
    if (record.redeemedAt) throw unknown();
    if (record.expiresAt.getTime() <= now)
      throw pollError('expired_token', 'The device_code has expired: start again at /device_authorization.');
    if (record.status === 'denied') throw pollError('access_denied', 'The person denied the authorization.');
    if (record.status === 'pending') {
      if (slowDown)
        throw pollError(
          'slow_down',
          `Polled too soon: wait at least ${record.intervalSeconds} seconds between requests from now on.`,
        );
      throw pollError('authorization_pending', 'The person has not approved or denied yet.');
    }
    const grant = record.grant!;
    const resource = boundAtToken(grant.resource, input.resource);
    const user = await this.deps.users.findById(grant.userId);
    // the person gone or disabled, or the session they approved in ended since (sign-out, password change)
    const ended = !user || user.disabledAt || (grant.sid && (await this.deps.revocations.isRevoked('', grant.sid)));
    if (ended || !(await this.deps.store.redeem(hash, new Date(now)))) throw unknown();
    return this.deps.grants.issue(grant, user, {
      resource,
      dpopJkt: input.dpopJkt,
      accessTokenAlg: app.accessTokenSignedResponseAlg,
    });
  }

  private audited(
    type: 'device.approved' | 'device.denied',
    record: DeviceAuthorization,
    userId: string,
    actor: AuditActor,
  ) {
    return this.deps.audit.record({
      type,
      actor,
      subject: userId,
      detail: {
        app_id: record.clientId,
        scopes: [...record.request.scopes, ...(record.request.resource?.scopes ?? [])],
        resource: record.request.resource?.uri ?? null,
      },
    });
  }

  private async prune(): Promise<void> {
    try {
      const removed = await this.deps.store.prune(new Date(this.options.now()));
      if (removed) this.deps.logger.info('expired device authorizations pruned', { rows: removed });
    } catch (err) {
      this.deps.logger.warn('device authorizations not pruned', { error: (err as Error).message });
    }
  }
}
