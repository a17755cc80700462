import type { Logger, Queryable } from '@attest/common';
import { webhookStore } from './webhook-store';

const DAY_MS = 24 * 3600 * 1000;

export interface WebhookRetention {
  /** Events older than this many days go (with their deliveries), unless a delivery of them is still pending. */
  eventDays: number;
  /** Finished deliveries (and their attempt log) older than this many days go. */
  deliveryDays: number;
}

/**
 * Removes the events and delivery logs past retention, `batch` rows at a time (short statements, on
 * Postgres and PGlite alike) until none is left; an event a delivery still waits to send stays. The
 * numbers removed.
 */
export async function purgeWebhookHistory(
  db: Queryable,
  retention: WebhookRetention,
  now = new Date(),
  batch = 1000,
): Promise<{ events: number; deliveries: number }> {
  const store = webhookStore(db);
  const eventsBefore = new Date(now.getTime() - retention.eventDays * DAY_MS);
  const deliveriesBefore = new Date(now.getTime() - retention.deliveryDays * DAY_MS);
  const total = { events: 0, deliveries: 0 };
  for (;;) {
    const removed = await store.purgeBatch(eventsBefore, deliveriesBefore, batch);
    total.events += removed.events;
    total.deliveries += removed.deliveries;
    if (removed.events < batch && removed.deliveries < batch) return total;
  }
}

/** Purges now and then every `everyMs` (hourly); replicas purging at once only find less to remove. */
export function startRetention(
  db: Queryable,
  retention: WebhookRetention,
  logger: Logger,
  everyMs = 3600000,
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const purge = () => {
    running = purgeWebhookHistory(db, retention).then(
      (removed) => {
        if (removed.events || removed.deliveries)
          logger.info('webhook history purged', {
            events: removed.events,
            deliveries: removed.deliveries,
            event_retention_days: retention.eventDays,
            delivery_retention_days: retention.deliveryDays,
          });
      },
      (err: Error) => {
        logger.warn('webhook history not purged', { error: err.message });
      },
    );
  };
  purge();
  const timer = setInterval(purge, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
