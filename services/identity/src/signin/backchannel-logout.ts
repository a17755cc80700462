import { postToTarget, resolveTarget, type Logger, type Lookup, type OutboundPolicy } from '@attest/common';
import type { LogoutDelivery, LogoutDeliveryStore } from './logout-delivery-store';
import { pairwiseSid, pairwiseSubject } from '../kernel/ids';
import type { Session } from '../kernel/sessions';

export interface BackChannelLogoutOptions {
  secret: string;
  /** Poll for due deliveries this often (a replica that ends a session also delivers at once). */
  intervalMs: number;
  /** Attempts before a delivery is given up (kept, with its last error, for the operator). */
  maxAttempts: number;
  /** Where logout tokens may be sent: the shared outbound guard (http only in embedded mode, private targets per setting). */
  targets: OutboundPolicy;
  /** DNS (tests answer for made-up hosts). */
  lookup?: Lookup;
  now?: () => number;
}

const TIMEOUT_MS = 5000;
const BATCH = 20;
const LEASE_MS = 30000;
/** 5 s, 10 s, 20 s … capped at an hour: with 10 attempts, about 1 h 25 min of trying. */
export const retryDelayMs = (attempts: number) => Math.min(5000 * 2 ** attempts, 3600000);

/**
 * OpenID Connect Back-Channel Logout 1.0: when a session ends, each app it signed in to that registered
 * a backchannel_logout_uri gets a signed logout_token. Deliveries are rows of an outbox written in the
 * transaction that ended the session, leased with SKIP LOCKED and retried with backoff: at least once.
 */
export class BackChannelLogout {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private readonly now: () => number;

  constructor(
    private readonly store: Pick<LogoutDeliveryStore, 'leaseDue' | 'delivered' | 'failed'>,
    private readonly tokens: { logoutToken(input: { aud: string; sub: string; sid: string }): Promise<string> },
    private readonly logger: Logger,
    private readonly options: BackChannelLogoutOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /**
   * The deliveries ended sessions owe: one per app each signed in to that has a back-channel URI
   * (`uris`, read in the transaction that ends them).
   */
  deliveriesFor(sessions: Session[], uris: Map<string, string>): Omit<LogoutDelivery, 'id' | 'attempts'>[] {
    const out: Omit<LogoutDelivery, 'id' | 'attempts'>[] = [];
    for (const session of sessions) {
      for (const appId of session.clientIds) {
        const uri = uris.get(appId);
        if (!uri) continue;
        out.push({
          appId,
          uri,
          sub: pairwiseSubject(this.options.secret, appId, session.userId),
          sid: pairwiseSid(this.options.secret, appId, session.id),
        });
      }
    }
    return out;
  }

  /** One pass over the due deliveries; returns how many were accepted. */
  async deliverDue(): Promise<number> {
    const now = this.now();
    const due = await this.store.leaseDue(new Date(now), BATCH, LEASE_MS);
    let delivered = 0;
    await Promise.all(
      due.map(async (d) => {
        const problem = await this.send(d);
        if (!problem) {
          delivered++;
          return this.store.delivered(d.id);
        }
        const attempts = d.attempts + 1;
        const retryAt = attempts >= this.options.maxAttempts ? null : new Date(this.now() + retryDelayMs(d.attempts));
        this.logger.warn('back-channel logout not delivered', {
          app_id: d.appId,
          attempts,
          error: problem,
          retrying: retryAt !== null,
        });
        await this.store.failed(d.id, problem, retryAt, new Date(this.now()));
      }),
    );
    return delivered;
  }

  /** Null when the app accepted the logout token (2xx), else what went wrong. */
  private async send(d: LogoutDelivery): Promise<string | null> {
    try {
      const logoutToken = await this.tokens.logoutToken({ aud: d.appId, sub: d.sub, sid: d.sid });
      // resolved, checked and pinned like a webhook: no private address, no DNS rebinding between check and connect
      const url = new URL(d.uri);
      const target = await resolveTarget(url, this.options.targets, this.options.lookup);
      const res = await postToTarget(
        url,
        target,
        { 'content-type': 'application/x-www-form-urlencoded', 'cache-control': 'no-store' },
        new URLSearchParams({ logout_token: logoutToken }).toString(),
        TIMEOUT_MS,
      );
      return res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** Deliver now (after a session ended here) rather than at the next poll. */
  kick(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.loop(), 0);
    this.timer.unref();
  }

  start(): void {
    this.timer = setTimeout(() => void this.loop(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    const timer = this.timer;
    this.timer = undefined;
    clearTimeout(timer);
    await this.running;
  }

  private async loop(): Promise<void> {
    if (this.running) return;
    this.running = this.deliverDue().catch((err: Error) =>
      this.logger.warn('back-channel logout pass failed', { error: err.message }),
    );
    await this.running;
    this.running = undefined;
    if (this.timer) {
      this.timer = setTimeout(() => void this.loop(), this.options.intervalMs);
      this.timer.unref();
    }
  }
}
