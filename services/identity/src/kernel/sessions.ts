import { LocalCache, type InvalidationBus, type Logger } from '@attest/common';
import type { SessionStore, StoredSession } from './session-store';
import { randomHex, sha256 } from './crypto';
import { newOpaqueId } from './ids';

/** A browser session as routes and the account page see it. */
export type Session = StoredSession;

export interface NewSession {
  userId: string;
  /** Seconds since the epoch, for auth_time and max_age. */
  authTime: number;
  /** RFC 8176 authentication method references of the sign-in, e.g. ['pwd']. */
  amr: string[];
  device?: string | null;
  address?: string | null;
}

export interface SessionLifetimes {
  /** A session unused this long has ended. */
  idleSeconds: number;
  /** A session this old has ended, however much it is used. */
  maxAgeSeconds: number;
}

/** What ending sessions must also do, in the same transaction (the back-channel logout outbox). */
export interface SessionEndings {
  /** Runs `fn` in one transaction with the stores it needs. */
  inTransaction<T>(
    fn: (store: Pick<SessionStore, 'delete'>, ended: (sessions: Session[]) => Promise<void>) => Promise<T>,
  ): Promise<T>;
  /** After the commit: deliver now rather than at the next poll. */
  kick(): void;
  /** After the commit of ended sessions whose apps were told: their revoked tokens reach every replica. */
  afterEnd(sessions: Session[]): Promise<void>;
}

const COOKIE = /^[0-9a-f]{64}$/;
const PRUNE_EVERY_MS = 10 * 60 * 1000;
/** Backstop TTL of a cached session; ending one reaches every replica through the bus within 1 s. */
const CACHE_TTL_MS = 30000;

/**
 * Browser sessions: durable in Postgres (so they can be listed and ended, and survive a cache loss),
 * served from each process's memory through LocalCache and the invalidation bus — the same pattern as
 * the directories. We chose this over "Redis plus a per-user index" because it keeps the silent
 * sign-in at memory speed (no network hop at all once warm), needs one store of record instead of two
 * to keep consistent, and ending a session reuses the mechanism that already makes a withdrawn consent
 * stop working on every replica within a second (an ended session is invalidated through the bus;
 * while the bus is down LocalCache trusts no entry older than 1 s).
 *
 * Idle timeout without a write per request: last_seen_at is written at most once per `touchEveryMs`
 * (a minute, or a tenth of the idle timeout if shorter), in the background. A replica whose cached copy
 * looks idle reads the row again before it decides, since another replica may have seen the session since.
 */
export class Sessions {
  private readonly cache: LocalCache<Session>;
  private readonly touchEveryMs: number;
  private pruner?: NodeJS.Timeout;

  constructor(
    private readonly store: Omit<SessionStore, 'delete'>,
    private readonly endings: SessionEndings,
    bus: InvalidationBus,
    private readonly lifetimes: SessionLifetimes,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new LocalCache(bus, { name: 'sessions', ttlMs: CACHE_TTL_MS, max: 100000 });
    this.touchEveryMs = Math.min(60000, (lifetimes.idleSeconds * 1000) / 10);
  }

  get maxAgeSeconds(): number {
    return this.lifetimes.maxAgeSeconds;
  }

  /** Seconds since the epoch by the sessions' clock: the auth_time of a sign-in now. */
  nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** Whether the user signed in (password or passkey) within the last `seconds`: a recent authentication. */
  authenticatedWithin(session: Pick<Session, 'authTime'>, seconds: number): boolean {
    return this.now() - session.authTime * 1000 <= seconds * 1000;
  }

  /** Starts a session; returns it and the cookie value (only its hash is stored). */
  async create(input: NewSession): Promise<{ cookie: string; session: Session }> {
    const cookie = newOpaqueId();
    const now = this.now();
    const session: Session = {
      id: randomHex(16),
      cookieHash: sha256(cookie),
      userId: input.userId,
      authTime: input.authTime,
      amr: input.amr,
      clientIds: [],
      device: input.device ?? null,
      address: input.address ?? null,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + this.lifetimes.maxAgeSeconds * 1000,
    };
    await this.store.insert(session);
    // a new row: another replica may hold its absence (a cookie is unguessable, so only in theory)
    await this.cache.invalidate(session.cookieHash);
    this.cache.set(session.cookieHash, session);
    return { cookie, session };
  }

  /** A sign-in: ends the browser's previous session, if any, then starts a new one (no old cookie stays valid). */
  async rotate(previousCookie: string | undefined, input: NewSession): Promise<{ cookie: string; session: Session }> {
    if (previousCookie && COOKIE.test(previousCookie)) await this.endWhere({ cookieHash: sha256(previousCookie) });
    return this.create(input);
  }

  /** The live session a cookie names: a memory lookup once warm. */
  async find(cookie: string | undefined): Promise<Session | null> {
    if (!cookie || !COOKIE.test(cookie)) return null;
    const key = sha256(cookie);
    let session = await this.cache.get(key, () => this.store.findByCookieHash(key));
    if (!session) return null;
    const now = this.now();
    if (this.expired(session, now)) {
      session = await this.store.findByCookieHash(key);
      if (session && this.expired(session, now)) {
        await this.endWhere({ id: session.id }, false);
        session = null;
      }
      this.cache.set(key, session);
      if (!session) return null;
    }
    if (now - session.lastSeenAt >= this.touchEveryMs) {
      session = { ...session, lastSeenAt: now };
      this.cache.set(key, session);
      this.store
        .touch(session.id, new Date(now))
        .catch((err: Error) => this.logger.warn('session not touched', { error: err.message }));
    }
    return session;
  }

  /** Records that the session signed in to an app (its back-channel logout is due when the session ends). */
  async recordClient(session: Session, clientId: string): Promise<void> {
    if (session.clientIds.includes(clientId)) return;
    await this.store.addClient(session.id, clientId);
    await this.cache.invalidate(session.cookieHash);
  }

  /** The user's live sessions, most recently used first (for the account page and the admin API). */
  listForUser(userId: string): Promise<Session[]> {
    const now = this.now();
    return this.store.listForUser(userId, new Date(now), new Date(now - this.lifetimes.idleSeconds * 1000));
  }

  /** Ends one of the user's sessions (by its public id); false when the user has no such session. */
  async end(userId: string, sessionId: string): Promise<boolean> {
    return (await this.endWhere({ id: sessionId, userId })) > 0;
  }

  /** Ends every session of the user, except `exceptSessionId` (e.g. the one in use); returns how many. */
  endAll(userId: string, exceptSessionId?: string): Promise<number> {
    return this.endWhere({ userId, exceptId: exceptSessionId });
  }

  /** Sign-out: ends the session the cookie names. */
  async endByCookie(cookie: string | undefined): Promise<Session | null> {
    if (!cookie || !COOKIE.test(cookie)) return null;
    const ended: Session[] = [];
    await this.endWhere({ cookieHash: sha256(cookie) }, true, ended);
    return ended[0] ?? null;
  }

  /** Loads nothing; starts the pruning of expired sessions. */
  start(): void {
    void this.prune();
    this.pruner = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruner.unref();
  }

  stop(): void {
    clearInterval(this.pruner);
  }

  private expired(session: Session, now: number): boolean {
    return now >= session.expiresAt || now - session.lastSeenAt >= this.lifetimes.idleSeconds * 1000;
  }

  /** Deletes, and (notify) writes the back-channel logouts in the same transaction; then invalidates everywhere. */
  private async endWhere(
    where: Parameters<SessionStore['delete']>[0],
    notify = true,
    out: Session[] = [],
  ): Promise<number> {
    const ended = await this.endings.inTransaction(async (store, record) => {
      const deleted = await store.delete(where);
      if (notify) await record(deleted);
      return deleted;
    });
    for (const session of ended) await this.cache.invalidate(session.cookieHash);
    if (notify && ended.some((s) => s.clientIds.length > 0)) {
      await this.endings.afterEnd(ended);
      this.endings.kick();
    }
    out.push(...ended);
    return ended.length;
  }

  private async prune(): Promise<void> {
    const now = this.now();
    try {
      const hashes = await this.store.prune(new Date(now), new Date(now - this.lifetimes.idleSeconds * 1000));
      for (const hash of hashes) await this.cache.invalidate(hash);
      if (hashes.length) this.logger.info('expired sessions pruned', { rows: hashes.length });
    } catch (err) {
      this.logger.warn('sessions not pruned', { error: (err as Error).message });
    }
  }
}
