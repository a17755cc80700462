import type { AuditLog, Logger, OutboundPolicy, Storage } from '@attest/common';
import { DeliveryWorker } from './delivery-worker';
import type { WebhookMetrics } from './webhook-metrics';
import { startRetention } from './webhook-retention';

// Every committed transaction change drops the row from the transactions cache through the bus (in this
// process at once, on other replicas through Redis): the cue that new outbox rows may be waiting.
const CHANGE_TOPIC = 'cache:transactions';

/** The settings the worker and the retention purge run with (TransactionsConfig's WEBHOOK_* and what config.ts derives). */
export interface DeliveryWorkerConfig {
  keyEncryptionKey: string;
  webhookRetrySchedule: number[];
  webhookTargets: OutboundPolicy;
  WEBHOOK_POLL_INTERVAL_MS: number;
  WEBHOOK_EVENT_RETENTION_DAYS: number;
  webhookDeliveryRetentionDays: number;
}

/**
 * Starts the delivery worker: it polls every WEBHOOK_POLL_INTERVAL_MS and wakes on each committed change;
 * and the retention purge of events and delivery logs (at start, then hourly).
 */
export function startDeliveryWorker(
  config: DeliveryWorkerConfig,
  storage: Pick<Storage, 'db' | 'bus'>,
  metrics: WebhookMetrics,
  logger: Logger,
  audit?: Pick<AuditLog, 'record'>,
): { stop(): Promise<void>; wake(): void } {
  const worker = new DeliveryWorker(
    storage.db,
    {
      keyEncryptionKey: config.keyEncryptionKey,
      retrySchedule: config.webhookRetrySchedule,
      targets: config.webhookTargets,
      intervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
      audit,
    },
    metrics,
    logger,
  );
  const unsubscribe = storage.bus.subscribe(CHANGE_TOPIC, () => worker.wake());
  worker.start();
  const retention = startRetention(
    storage.db,
    { eventDays: config.WEBHOOK_EVENT_RETENTION_DAYS, deliveryDays: config.webhookDeliveryRetentionDays },
    logger,
  );
  return {
    wake: () => worker.wake(),
    async stop() {
      unsubscribe();
      await Promise.all([worker.stop(), retention.stop()]);
    },
  };
}
