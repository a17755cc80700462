import {
  postToTarget,
  WorkerLoop,
  type AuditLog,
  type Db,
  type Logger,
  type OutboundPolicy,
  type Queryable,
} from '@attest/common';
import { endpointEvent, type LastAttempt } from './webhook-endpoint-events';
import { FAILING_AFTER_FAILURES, type EndpointEventType } from './webhook-filters';
import type { WebhookMetrics } from './webhook-metrics';
import { nextStep, throttleMs, type AttemptOutcome } from './webhook-schedule';
import { signingSecrets } from './webhook-service';
import { webhookHeaders } from './webhook-signature';
import { webhookStore } from './webhook-store';
import { resolveTarget, type Lookup } from './webhook-targets';
import { LOG_BODY_LIMIT, type DueDelivery, type WebhookEndpoint } from './webhook-types';

export interface DeliveryWorkerOptions {
  keyEncryptionKey: string;
  /** Seconds to wait after each failed attempt; its length is the number of retries. */
  retrySchedule: number[];
  /** Where deliveries may go (the shared outbound guard): http and private addresses per mode and setting. */
  targets: OutboundPolicy;
  intervalMs: number;
  timeoutMs?: number;
  batchSize?: number;
  leaseMs?: number;
  lookup?: Lookup;
  /** Where an endpoint that begins failing or is disabled is recorded (webhook.failing, webhook.disabled). */
  audit?: Pick<AuditLog, 'record'>;
}

const MAX_ERROR_LENGTH = 300;

/**
 * Sends due webhook deliveries: leases them (SKIP LOCKED, so replicas share the work and never send one
 * delivery at once), signs each attempt, POSTs to the checked address, and records the outcome with the
 * next attempt's time. At least once: an attempt cut short by a crash is sent again after its lease.
 */
export class DeliveryWorker {
  private readonly loop: WorkerLoop;
  private readonly store;
  private readonly stopping = new AbortController();

  constructor(
    private readonly db: Db,
    private readonly options: DeliveryWorkerOptions,
    private readonly metrics: WebhookMetrics,
    private readonly logger: Logger,
  ) {
    this.store = webhookStore(db);
    this.loop = new WorkerLoop({
      name: 'webhook delivery',
      pass: () => this.pass(),
      intervalMs: options.intervalMs,
      logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  /** A change committed: look for new deliveries now rather than at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  /** One pass; true when the batch was full (more may be due). */
  async pass(): Promise<boolean> {
    const batchSize = this.options.batchSize ?? 20;
    const leased = await this.store.leaseDue(batchSize, this.options.leaseMs ?? 60000);
    await Promise.all(leased.map((d) => this.attempt(d)));
    return leased.length === batchSize;
  }

  private async attempt(delivery: DueDelivery): Promise<void> {
    const startedAt = new Date();
    const started = process.hrtime.bigint();
    const outcome = await this.send(delivery, startedAt);
    if (this.stopping.signal.aborted) {
      await this.store.release(delivery.id).catch(() => undefined);
      return;
    }
    const latencyMs = Math.round(Number(process.hrtime.bigint() - started) / 1e6);
    const now = new Date();
    const step = nextStep(
      outcome,
      delivery.attempts + 1,
      this.options.retrySchedule,
      delivery.endpoint.failingSince,
      now,
    );
    const throttle = throttleMs(outcome, step, now);
    const last: LastAttempt = { statusCode: outcome.statusCode, error: outcome.error ?? null };
    const change = await this.db.transaction(async (tx) => {
      const store = webhookStore(tx);
      const changed = await store.recordAttempt({
        delivery,
        startedAt,
        statusCode: outcome.statusCode,
        error: outcome.error ?? null,
        latencyMs,
        responseBody: outcome.body ?? null,
        responseBodyTruncated: outcome.bodyTruncated ?? false,
        status: step.kind === 'succeeded' ? 'succeeded' : step.kind === 'retry' ? 'pending' : 'failed',
        nextAttemptAt: step.kind === 'retry' ? new Date(now.getTime() + step.delayMs) : null,
        disable: step.kind === 'disable' ? step.reason : null,
        throttleUntil: throttle === null ? null : new Date(now.getTime() + throttle),
        failingAfter: FAILING_AFTER_FAILURES,
      });
      // the report commits with the change it reports: the event to the app's other endpoints, the audit record
      if (changed?.disabled) await this.report(tx, 'webhook_endpoint.disabled', changed.disabled, last);
      else if (changed?.failing) await this.report(tx, 'webhook_endpoint.failing', changed.failing, last);
      return changed;
    });
    if (!change) return;
    const endpointId = delivery.endpoint.id;
    const throttled = (step.kind === 'retry' || step.kind === 'give-up') && step.throttle;
    this.metrics.attempts.inc({
      endpoint_id: endpointId,
      outcome: step.kind === 'succeeded' ? 'success' : throttled ? 'throttled' : 'failure',
    });
    if (step.kind === 'succeeded')
      this.metrics.lag.observe({ endpoint_id: endpointId }, (now.getTime() - delivery.eventCreatedAt.getTime()) / 1000);
    if (change.disabled) this.metrics.endpointReports.inc({ endpoint_id: endpointId, state: 'disabled' });
    else if (change.failing) this.metrics.endpointReports.inc({ endpoint_id: endpointId, state: 'failing' });
    if (step.kind === 'disable')
      this.logger.warn('webhook endpoint disabled', { webhook_id: endpointId, reason: step.reason });
    else if (change.failing)
      this.logger.warn('webhook endpoint failing', {
        webhook_id: endpointId,
        consecutive_failures: change.failing.consecutiveFailures,
      });
    if (step.kind !== 'succeeded')
      this.logger.info('webhook delivery failed', {
        webhook_id: endpointId,
        delivery_id: delivery.id,
        status: outcome.statusCode,
        error: outcome.error,
        next: step.kind,
        throttled,
      });
  }

  /** Reports an endpoint that began failing or was disabled: an event to the app's other endpoints, an audit record. */
  private async report(tx: Queryable, type: EndpointEventType, endpoint: WebhookEndpoint, last: LastAttempt) {
    await webhookStore(tx).addEvent(endpointEvent(type, endpoint, last), { except: endpoint.id });
    await this.options.audit?.record(
      {
        type: type === 'webhook_endpoint.disabled' ? 'webhook.disabled' : 'webhook.failing',
        actor: { type: 'system', id: 'webhook-delivery' },
        subject: endpoint.id,
        detail: {
          app_id: endpoint.appId,
          url: endpoint.url,
          reason: endpoint.disabledReason,
          consecutive_failures: endpoint.consecutiveFailures,
          last_status_code: last.statusCode,
          last_error: last.error,
        },
      },
      tx,
    );
  }

  private async send(
    delivery: DueDelivery,
    now: Date,
  ): Promise<AttemptOutcome & { error?: string; body?: string; bodyTruncated?: boolean }> {
    try {
      const url = new URL(delivery.endpoint.url);
      const target = await resolveTarget(url, this.options.targets, this.options.lookup);
      const headers = webhookHeaders(
        signingSecrets(delivery.endpoint, this.options.keyEncryptionKey, now),
        delivery.eventId,
        delivery.body,
        now,
      );
      const answer = await postToTarget(
        url,
        target,
        headers,
        delivery.body,
        this.options.timeoutMs ?? 15000,
        this.stopping.signal,
        LOG_BODY_LIMIT,
      );
      return answer.statusCode >= 200 && answer.statusCode < 300
        ? answer
        : { ...answer, error: `HTTP ${answer.statusCode}` };
    } catch (err) {
      return { statusCode: null, error: (err as Error).message.slice(0, MAX_ERROR_LENGTH) };
    }
  }

  /** Stops polling, cuts in-flight requests short (their deliveries are released, not counted) and waits. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop.stop();
  }
}
