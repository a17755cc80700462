import type { InvalidationBus, Logger } from '@attest/common';
import type { RevocationStore, UsedCode } from './revocation-store';

const TOPIC = 'revoked';
const BEFORE_TOPIC = 'revoked-before';
const PRUNE_EVERY_MS = 10 * 60 * 1000;
/** While the bus is down, revocations made on other replicas are read from Postgres this often. */
const RELOAD_WHILE_DISCONNECTED_MS = 1000;

/** Exchanged codes written in one statement at most (bounds the statement's size under a burst). */
const MAX_CODES_PER_WRITE = 500;

const REVOKED = Promise.resolve(true);
const NOT_REVOKED = Promise.resolve(false);

/** The revocation key of every token of an ended session: its `sid` claim. */
export const sessionKey = (sid: string) => `sid:${sid}`;
/** The "before" revocation key of a user's tokens for an app (a consent withdrawn). */
export const consentKey = (userId: string, appId: string) => `consent:${userId}:${appId}`;

/**
 * Revoked access tokens: durable in Postgres until they expire, checked from an in-process set.
 * The set is loaded at start, kept current through the bus (one message per revocation), reloaded
 * after a bus resync, and read again from Postgres at most once a second while the bus is down, so a
 * revocation reaches every replica within a second.
 */
export class Revocations {
  private readonly revoked = new Map<string, number>();
  /** Keys (e.g. `consent:{user}:{app}`) whose tokens issued before a time (ms) are revoked. */
  private readonly revokedBefore = new Map<string, { before: number; expiresAt: number }>();
  private reloading?: Promise<void>;
  private loadedAt = 0;
  private pruner?: NodeJS.Timeout;
  private readonly pendingCodes: {
    codeHash: string;
    used: UsedCode;
    resolve: () => void;
    reject: (err: unknown) => void;
  }[] = [];
  private writingCodes = false;

  constructor(
    private readonly store: RevocationStore,
    private readonly bus: InvalidationBus,
    private readonly logger: Logger,
  ) {
    bus.subscribe(TOPIC, (message) => this.receive(message));
    bus.subscribe(BEFORE_TOPIC, (message) => this.receiveBefore(message));
    bus.onResync(
      () =>
        void this.reload().catch((err: Error) => this.logger.warn('revocations not reloaded', { error: err.message })),
    );
  }

  /** Loads the set and starts the hourly pruning of expired rows. */
  async start(): Promise<void> {
    await this.reload();
    void this.prune();
    this.pruner = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruner.unref();
  }

  stop(): void {
    clearInterval(this.pruner);
  }

  /**
   * A memory lookup; the promise is already settled unless the set must be refreshed first. With `sid`
   * (the token's session), a token of an ended session is revoked too.
   */
  isRevoked(jti: string, sid?: string): Promise<boolean> {
    if (this.reloading || (!this.bus.connected && Date.now() - this.loadedAt > RELOAD_WHILE_DISCONNECTED_MS)) {
      return this.reload().then(() => this.has(jti) || (sid !== undefined && this.has(sessionKey(sid))));
    }
    return this.has(jti) || (sid !== undefined && this.has(sessionKey(sid))) ? REVOKED : NOT_REVOKED;
  }

  /**
   * Whether a token issued at `iat` (seconds) is revoked by a "before" revocation of `key`: a memory
   * lookup, current as of the last isRevoked (which refreshes the set when it must). Conservative: a
   * token issued in the same second as the revocation counts as issued before it.
   */
  revokedBeforeIssue(key: string, iat: number): boolean {
    const entry = this.revokedBefore.get(key);
    if (!entry) return false;
    if (entry.expiresAt <= Date.now()) {
      this.revokedBefore.delete(key);
      return false;
    }
    return iat * 1000 < Math.ceil(entry.before / 1000) * 1000;
  }

  /**
   * Waits, if `key` was revoked in the current second (by `now`), until the next second begins: a token
   * issued after that is not taken for one issued before the revocation (`iat` has whole seconds). For
   * an app approved again in the second its consent was withdrawn; at most 2 s (clock skew).
   */
  async pastRevocationOf(key: string, now: () => number): Promise<void> {
    const entry = this.revokedBefore.get(key);
    if (!entry) return;
    const wait = Math.min(Math.ceil(entry.before / 1000) * 1000 - now(), 2000);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  /**
   * Revocations the caller already wrote to Postgres in its own transaction (e.g. the sessions it
   * ended, with revocationStore(tx).revoke): here and on every replica.
   */
  async announce(jtis: string[], expiresAt: Date): Promise<void> {
    if (jtis.length === 0) return;
    const message = `${expiresAt.getTime()} ${jtis.join(' ')}`;
    this.receive(message);
    await this.bus.publish(TOPIC, message);
  }

  /** Every token of `key` issued before `before` is revoked: durable first, then here and on every replica. */
  async revokeBefore(key: string, before: Date, expiresAt: Date): Promise<void> {
    await this.store.revokeBefore(key, before, expiresAt);
    const message = `${expiresAt.getTime()} ${before.getTime()} ${key}`;
    this.receiveBefore(message);
    await this.bus.publish(BEFORE_TOPIC, message);
  }

  /** Durable first, then here and on every replica. */
  async revoke(jtis: string[], expiresAt: Date): Promise<void> {
    if (jtis.length === 0) return;
    await this.store.revoke(jtis, expiresAt);
    await this.announce(jtis, expiresAt);
  }

  /**
   * An exchanged code and the tokens it gave, recorded before the tokens are handed out. Group
   * commit: while one write is in flight, the codes exchanged meanwhile wait and then go in one
   * statement, so under load the database sees one commit for many exchanges (the profile of the
   * sign-in round trip had one INSERT per code as its largest part); alone, a code is written at
   * once. Each caller's promise settles only when its own row is committed, or fails with the write.
   */
  recordUsedCode(codeHash: string, used: UsedCode): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pendingCodes.push({ codeHash, used, resolve, reject });
      if (!this.writingCodes) void this.writeCodes();
    });
  }

  private async writeCodes(): Promise<void> {
    this.writingCodes = true;
    try {
      while (this.pendingCodes.length > 0) {
        const batch = this.pendingCodes.splice(0, MAX_CODES_PER_WRITE);
        try {
          await this.store.recordUsedCodes(batch);
          for (const code of batch) code.resolve();
        } catch (err) {
          for (const code of batch) code.reject(err);
        }
      }
    } finally {
      this.writingCodes = false;
    }
  }

  usedCode(codeHash: string): Promise<UsedCode | null> {
    return this.store.usedCode(codeHash);
  }

  private has(jti: string): boolean {
    const expiresAt = this.revoked.get(jti);
    if (expiresAt === undefined) return false;
    if (expiresAt > Date.now()) return true;
    this.revoked.delete(jti);
    return false;
  }

  private receive(message: string): void {
    const [expiresAt, ...jtis] = message.split(' ');
    const at = Number(expiresAt);
    if (!Number.isFinite(at)) return;
    for (const jti of jtis) if (jti) this.revoked.set(jti, at);
  }

  private receiveBefore(message: string): void {
    const [expiresAt, before, key] = message.split(' ');
    const at = Number(expiresAt);
    const since = Number(before);
    if (!key || !Number.isFinite(at) || !Number.isFinite(since)) return;
    this.setBefore(key, since, at);
  }

  private setBefore(key: string, before: number, expiresAt: number): void {
    const known = this.revokedBefore.get(key);
    this.revokedBefore.set(key, {
      before: Math.max(before, known?.before ?? 0),
      expiresAt: Math.max(expiresAt, known?.expiresAt ?? 0),
    });
  }

  /** Revocations only accumulate, so a reload adds to the set and cannot lose a message received meanwhile. */
  private reload(): Promise<void> {
    if (this.reloading) return this.reloading;
    const started = Date.now();
    const promise = Promise.all([this.store.live(), this.store.liveBefore()]).then(
      ([rows, before]) => {
        for (const row of rows) this.revoked.set(row.jti, row.expiresAt.getTime());
        for (const row of before) this.setBefore(row.key, row.before.getTime(), row.expiresAt.getTime());
        this.loadedAt = started;
        this.reloading = undefined;
      },
      (err: unknown) => {
        this.reloading = undefined;
        throw err;
      },
    );
    this.reloading = promise;
    return promise;
  }

  private async prune(): Promise<void> {
    const now = Date.now();
    for (const [jti, expiresAt] of this.revoked) if (expiresAt <= now) this.revoked.delete(jti);
    for (const [key, entry] of this.revokedBefore) if (entry.expiresAt <= now) this.revokedBefore.delete(key);
    try {
      const removed = await this.store.prune();
      if (removed) this.logger.info('expired revocations pruned', { rows: removed });
    } catch (err) {
      this.logger.warn('revocations not pruned', { error: (err as Error).message });
    }
  }
}
