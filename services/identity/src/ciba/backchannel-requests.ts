import {
  AppError,
  decrypt,
  encrypt,
  LocalCache,
  type AuditLog,
  type Cache,
  type InvalidationBus,
  type Logger,
} from '@attest/common';
import type { App } from '../kernel/app-store';
import { sha256 } from '../kernel/crypto';
import { newOpaqueId } from '../kernel/ids';
import type { AuthorizationDetail } from './authorization-details';
import type { BackchannelRequest, BackchannelStatus, BackchannelStore } from './backchannel-store';
import type { PingNotifier } from './ping';

/** CIBA Core §7.3: the least time between two polls (seconds); a faster poll is answered slow_down. */
export const POLL_INTERVAL_SECONDS = 5;
/** How long a request waits for the person unless requested_expiry says otherwise, and its bounds (seconds). */
export const DEFAULT_EXPIRY_SECONDS = 300;
export const MIN_EXPIRY_SECONDS = 30;
export const MAX_EXPIRY_SECONDS = 1800;
/** The most requests of one app that may wait for one person: a flood of asks never buries the account page. */
export const MAX_PENDING_PER_APP = 5;
/** An expired request is kept this long (so a late poll answers expired_token), then pruned. */
const KEPT_AFTER_EXPIRY_MS = 86_400_000;
/**
 * How long a request read as pending is taken to be pending without reading it again, unless a decision
 * says otherwise sooner (decide() drops it on every replica through the bus): the backstop for a lost message.
 */
const PENDING_KNOWN_MS = 30_000;
const PENDING_KNOWN_MAX = 50_000;

/** What a poll needs of a request read as pending: whose it is and until when it waits. */
interface KnownRequest {
  appId: string;
  status: BackchannelStatus;
  expiresAt: number;
}

const tokenError = (code: string, detail: string) => new AppError(code, 400, detail, 'auth_req_id');

export interface BackchannelOptions {
  /** KEY_ENCRYPTION_KEY: seals the ping mode's auth_req_id and client_notification_token at rest. */
  keyEncryptionKey: string;
  now: () => number;
}

/**
 * Backchannel authentication requests (CIBA Core 1.0, poll and ping modes): an app asks, the person decides
 * on the account page, the app redeems the approval once at /token. The store holds each state change as a
 * conditional UPDATE, so two replicas never both approve, deny or redeem one request.
 */
export class BackchannelRequests {
  private timer: NodeJS.Timeout | undefined;
  /**
   * Requests as last read, by the hash of their auth_req_id: a poll of one known to be pending answers
   * without the database. An agent polls every five seconds until the person acts, so nearly every poll is
   * of a pending request; a decision drops the entry here and on every replica, and only a pending entry
   * is trusted (an approval is always redeemed by the store's conditional UPDATE).
   */
  private readonly known: LocalCache<KnownRequest>;

  constructor(
    private readonly store: BackchannelStore,
    private readonly deps: {
      cache: Pick<Cache, 'setIfAbsent'>;
      bus: InvalidationBus;
      audit: Pick<AuditLog, 'record'>;
      logger: Logger;
      ping: PingNotifier;
    },
    private readonly options: BackchannelOptions,
  ) {
    this.known = new LocalCache(deps.bus, {
      name: 'ciba-requests',
      ttlMs: PENDING_KNOWN_MS,
      max: PENDING_KNOWN_MAX,
      sizeOf: (r) => r.appId.length + 40,
    });
  }

  private now(): Date {
    return new Date(this.options.now());
  }

  /** A new request; its auth_req_id (given once, kept only as a hash). */
  async create(input: {
    app: App;
    userId: string;
    sub: string;
    scopes: string[];
    bindingMessage: string | null;
    acrValues: string[];
    authorizationDetails: AuthorizationDetail[] | null;
    expiresIn: number;
    notificationToken: string | null;
  }): Promise<{ authReqId: string; expiresIn: number; interval: number }> {
    const created = this.now();
    const authReqId = newOpaqueId();
    const ping = input.app.backchannelTokenDeliveryMode === 'ping' && input.notificationToken !== null;
    const id = `bcr_${newOpaqueId().slice(0, 32)}`;
    const inserted = await this.store.insertWithin(
      {
        id,
        authReqHash: sha256(authReqId),
        appId: input.app.id,
        userId: input.userId,
        sub: input.sub,
        scopes: input.scopes,
        bindingMessage: input.bindingMessage,
        acrValues: input.acrValues,
        authorizationDetails: input.authorizationDetails,
        notification: ping
          ? encrypt(this.options.keyEncryptionKey, JSON.stringify({ authReqId, token: input.notificationToken }))
          : null,
        createdAt: created,
        expiresAt: new Date(created.getTime() + input.expiresIn * 1000),
      },
      MAX_PENDING_PER_APP,
    );
    if (!inserted)
      throw new AppError(
        'too_many_requests',
        429,
        `${MAX_PENDING_PER_APP} requests of this app already wait for this person: wait until they decide or expire.`,
        'login_hint',
        { headers: { 'Retry-After': String(POLL_INTERVAL_SECONDS) } },
      );
    await this.deps.audit.record({
      type: 'ciba.requested',
      actor: { type: 'app', id: input.app.id },
      subject: input.userId,
      detail: {
        request_id: id,
        sub: input.sub,
        scopes: input.scopes,
        authorization_details: input.authorizationDetails,
        expires_in: input.expiresIn,
        mode: input.app.backchannelTokenDeliveryMode,
      },
    });
    return { authReqId, expiresIn: input.expiresIn, interval: POLL_INTERVAL_SECONDS };
  }

  pendingFor(userId: string): Promise<BackchannelRequest[]> {
    return this.store.pendingFor(userId, this.now());
  }

  countPending(userId: string): Promise<number> {
    return this.store.countPending(userId, this.now());
  }

  /**
   * The person approves (after a fresh proof, checked by the caller) or denies one of their pending
   * requests, once; null when it is not theirs, not pending or expired. A ping app is told at once.
   */
  async decide(
    requestId: string,
    userId: string,
    decision: { status: 'approved' | 'denied'; acr?: string; amr?: string[] },
  ): Promise<BackchannelRequest | null> {
    const decided = await this.store.decide(requestId, userId, decision, this.now());
    if (!decided) return null;
    // no longer pending: the next poll, on any replica, reads it again (and redeems an approval)
    await this.known.invalidate(decided.authReqHash);
    if (decided.notification) {
      const { authReqId, token } = JSON.parse(decrypt(this.options.keyEncryptionKey, decided.notification)) as {
        authReqId: string;
        token: string;
      };
      this.deps.ping.notify(decided.appId, decided.id, authReqId, token);
    }
    return decided;
  }

  /**
   * The token endpoint's answer for an auth_req_id of this app (CIBA Core §11): the approved request,
   * redeemed now (once), or the error to answer with.
   */
  async redeem(authReqId: string, appId: string): Promise<BackchannelRequest> {
    const hash = sha256(authReqId);
    const now = this.now();
    const seen = this.known.peek(hash);
    if (seen?.status === 'pending' && seen.appId === appId && seen.expiresAt > now.getTime())
      return this.stillPending(hash);
    const redeemed = await this.store.redeem(hash, appId, now);
    if (redeemed) return redeemed;
    // read again, after this failed UPDATE: an entry other than pending is not trusted; a read under way (of
    // another poll, begun after its own UPDATE failed) is joined; what is read is kept unless a decision came
    // meanwhile (LocalCache drops a load that overlaps an invalidation)
    if (seen !== undefined) this.known.forget(hash);
    const found = await this.known.get(hash, async () => {
      const row = await this.store.findByHash(hash);
      return row ? { appId: row.appId, status: row.status, expiresAt: row.expiresAt.getTime() } : null;
    });
    if (!found || found.appId !== appId)
      throw tokenError('invalid_grant', 'auth_req_id names no backchannel authentication request of this app.');
    if (found.status === 'redeemed')
      throw tokenError('invalid_grant', 'This auth_req_id was already exchanged for tokens: an approval is used once.');
    if (found.expiresAt <= now.getTime())
      throw tokenError('expired_token', 'The backchannel authentication request expired before it was approved.');
    if (found.status === 'denied') throw tokenError('access_denied', 'The person denied the request.');
    return this.stillPending(hash);
  }

  /** A pending request (or one approved since it was read): authorization_pending, or slow_down when polled too fast. */
  private async stillPending(hash: string): Promise<never> {
    // a poll sooner than the interval after the last one is slow_down (every replica sees the mark)
    const first = await this.deps.cache.setIfAbsent(`ciba-poll:${hash}`, '1', POLL_INTERVAL_SECONDS * 1000);
    if (!first)
      throw tokenError(
        'slow_down',
        `Poll at most once every ${POLL_INTERVAL_SECONDS} seconds (interval), and wait 5 seconds more from now on.`,
      );
    throw tokenError('authorization_pending', 'The person has not approved or denied the request yet.');
  }

  /** Prunes requests expired for a day, hourly. */
  start(): void {
    this.timer = setInterval(() => {
      this.store
        .prune(new Date(this.options.now() - KEPT_AFTER_EXPIRY_MS))
        .catch((err: Error) => this.deps.logger.warn('backchannel request pruning failed', { error: err.message }));
    }, 3_600_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
