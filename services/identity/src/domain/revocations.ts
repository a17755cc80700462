import type { InvalidationBus, Logger } from '@attest/common';
import type { RevocationStore, UsedCode } from '../store/revocation-store';

const TOPIC = 'revoked';
const PRUNE_EVERY_MS = 10 * 60 * 1000;
/** While the bus is down, revocations made on other replicas are read from Postgres this often. */
const RELOAD_WHILE_DISCONNECTED_MS = 1000;

/** Exchanged codes written in one statement at most (bounds the statement's size under a burst). */
const MAX_CODES_PER_WRITE = 500;

const REVOKED = Promise.resolve(true);
const NOT_REVOKED = Promise.resolve(false);

/**
 * Revoked access tokens: durable in Postgres until they expire, checked from an in-process set.
 * The set is loaded at start, kept current through the bus (one message per revocation), reloaded
 * after a bus resync, and read again from Postgres at most once a second while the bus is down, so a
 * revocation reaches every replica within a second.
 */
export class Revocations {
  private readonly revoked = new Map<string, number>();
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

  /** A memory lookup; the promise is already settled unless the set must be refreshed first. */
  isRevoked(jti: string): Promise<boolean> {
    if (this.reloading || (!this.bus.connected && Date.now() - this.loadedAt > RELOAD_WHILE_DISCONNECTED_MS)) {
      return this.reload().then(() => this.has(jti));
    }
    return this.has(jti) ? REVOKED : NOT_REVOKED;
  }

  /** Durable first, then here and on every replica. */
  async revoke(jtis: string[], expiresAt: Date): Promise<void> {
    if (jtis.length === 0) return;
    await this.store.revoke(jtis, expiresAt);
    const message = `${expiresAt.getTime()} ${jtis.join(' ')}`;
    this.receive(message);
    await this.bus.publish(TOPIC, message);
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

  /** Revocations only accumulate, so a reload adds to the set and cannot lose a message received meanwhile. */
  private reload(): Promise<void> {
    if (this.reloading) return this.reloading;
    const started = Date.now();
    const promise = this.store.live().then(
      (rows) => {
        for (const row of rows) this.revoked.set(row.jti, row.expiresAt.getTime());
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
    try {
      const removed = await this.store.prune();
      if (removed) this.logger.info('expired revocations pruned', { rows: removed });
    } catch (err) {
      this.logger.warn('revocations not pruned', { error: (err as Error).message });
    }
  }
}
