import { postToTarget, resolveTarget, type Logger, type Lookup, type OutboundPolicy } from '@attest/common';
import type { AppDirectory } from '../kernel/directories';

const TIMEOUT_MS = 5000;
/** Attempts of one notification, and the wait before each retry (ms). */
const RETRY_DELAYS_MS = [1000, 5000];

/**
 * CIBA ping mode (CIBA Core §10.2): once the person decided, POST {"auth_req_id": …} to the app's
 * backchannel_client_notification_endpoint with its client_notification_token as the bearer token, through
 * the shared outbound guard (resolved, checked and pinned like a webhook or a back-channel logout). Up to
 * three attempts; a notification never delivered leaves the app its polls (the token endpoint answers them
 * whatever the mode).
 */
export class PingNotifier {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly apps: Pick<AppDirectory, 'find'>,
    private readonly options: { targets: OutboundPolicy; logger: Logger; lookup?: Lookup },
  ) {}

  /** Sends in the background; failures are logged (never the token). */
  notify(appId: string, requestId: string, authReqId: string, token: string): void {
    const sending = this.deliver(appId, requestId, authReqId, token).finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  private async deliver(appId: string, requestId: string, authReqId: string, token: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const problem = await this.send(appId, authReqId, token);
      if (problem === null) return;
      if (attempt >= RETRY_DELAYS_MS.length) {
        this.options.logger.warn('CIBA ping not delivered', { app_id: appId, request_id: requestId, error: problem });
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt]).unref());
    }
  }

  /** Null when the app accepted the notification (2xx), else what went wrong. */
  private async send(appId: string, authReqId: string, token: string): Promise<string | null> {
    try {
      const app = await this.apps.find(appId);
      const uri = app?.backchannelClientNotificationEndpoint;
      if (!app || app.disabledAt || !uri) return null;
      const url = new URL(uri);
      const target = await resolveTarget(url, this.options.targets, this.options.lookup);
      const res = await postToTarget(
        url,
        target,
        { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'cache-control': 'no-store' },
        JSON.stringify({ auth_req_id: authReqId }),
        TIMEOUT_MS,
      );
      return res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** Waits for the notifications under way (shutdown, tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }
}
