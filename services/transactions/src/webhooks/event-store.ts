import { preparedStatement, type Queryable } from '@attest/common';
import type { WebhookEvent } from '../kernel/events';
import { typeMatchesSql } from './webhook-filters';
import { NEW_DELIVERY_ID } from './webhook-rows';
import type { EventCursor, EventRouting, StoredEvent } from './webhook-types';

/** The outbox of events (written in the change's own transaction), the events list read from it, and its retention. SQL only. */
export function eventStore(db: Queryable) {
  return {
    /**
     * Writes an event to the outbox with a delivery for each enabled endpoint of its app. Runs in the
     * transaction of the change it describes, so it commits, or rolls back, with it.
     */
    async addEvent(event: WebhookEvent, routing: EventRouting = {}): Promise<void> {
      await db.query(
        preparedStatement(`WITH event AS (
           INSERT INTO webhook_events (id, app_id, type, transaction_id, payment_request_id, body, endpoint_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           RETURNING id, app_id, type)
         INSERT INTO webhook_deliveries (id, event_id, endpoint_id)
         SELECT ${NEW_DELIVERY_ID}, event.id, w.id FROM event JOIN webhook_endpoints w ON w.app_id = event.app_id AND w.disabled_at IS NULL
         WHERE CASE WHEN $7::text IS NOT NULL THEN w.id = $7
           ELSE w.id IS DISTINCT FROM $8 AND ${typeMatchesSql('event.type', 'w.enabled_events')} END`),
        [
          event.id,
          event.appId,
          event.type,
          event.transactionId,
          event.paymentRequestId ?? null,
          event.body,
          routing.only ?? null,
          routing.except ?? null,
        ],
      );
    },
    /**
     * Writes several events (the changes written together in one transaction), in their order, each with
     * a delivery for each enabled endpoint of its app whose filter takes it: addEvent's work in one
     * statement, with no routing.
     */
    async addEvents(events: readonly WebhookEvent[]): Promise<void> {
      if (events.length === 0) return;
      await db.query(
        preparedStatement(`WITH event AS (
           INSERT INTO webhook_events (id, app_id, type, transaction_id, payment_request_id, body)
           SELECT id, app_id, type, transaction_id, payment_request_id, body
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
             WITH ORDINALITY AS e(id, app_id, type, transaction_id, payment_request_id, body, n)
           ORDER BY n
           RETURNING id, app_id, type)
         INSERT INTO webhook_deliveries (id, event_id, endpoint_id)
         SELECT ${NEW_DELIVERY_ID}, event.id, w.id FROM event JOIN webhook_endpoints w ON w.app_id = event.app_id AND w.disabled_at IS NULL
         WHERE ${typeMatchesSql('event.type', 'w.enabled_events')}`),
        [
          events.map((e) => e.id),
          events.map((e) => e.appId),
          events.map((e) => e.type),
          events.map((e) => e.transactionId),
          events.map((e) => e.paymentRequestId ?? null),
          events.map((e) => e.body),
        ],
      );
    },
    async eventsOf(transactionId: string): Promise<WebhookEvent[]> {
      const rows = await db.query<{
        id: string;
        app_id: string;
        type: string;
        transaction_id: string | null;
        body: string;
      }>(
        'SELECT id, app_id, type, transaction_id, body FROM webhook_events WHERE transaction_id = $1 ORDER BY created_at, id',
        [transactionId],
      );
      return rows.map((r) => ({
        id: r.id,
        appId: r.app_id,
        type: r.type,
        transactionId: r.transaction_id,
        body: r.body,
      }));
    },
    /** Where the events list continues after the app's event `id`; null when the app has no such event. */
    async eventCursor(appId: string, id: string): Promise<EventCursor | null> {
      const [row] = await db.query<{ tx: string; seq: string }>(
        'SELECT tx::text AS tx, seq::text AS seq FROM webhook_events WHERE id = $1 AND app_id = $2 AND endpoint_id IS NULL',
        [id, appId],
      );
      return row ?? null;
    },
    /**
     * The app's events after `after`, oldest first, in an order that never changes (writing transaction,
     * then insertion); only events of transactions that ended before every running one began, so an event
     * that commits later can never land before a cursor already handed out. Test events are left out.
     */
    async listEvents(
      appId: string,
      after: EventCursor | null,
      limit: number,
      types: string[] | null,
    ): Promise<StoredEvent[]> {
      const rows = await db.query<{ id: string; type: string; body: string; created_at: Date }>(
        `SELECT id, type, body, created_at FROM webhook_events
         WHERE app_id = $1 AND endpoint_id IS NULL AND tx < pg_snapshot_xmin(pg_current_snapshot())
           AND ($2::xid8 IS NULL OR (tx, seq) > ($2::xid8, $3::bigint))
           AND ${typeMatchesSql('type', '$5::text[]')}
         ORDER BY tx, seq LIMIT $4`,
        [appId, after?.tx ?? null, after?.seq ?? null, limit, types],
      );
      return rows.map((r) => ({ id: r.id, type: r.type, body: r.body, createdAt: r.created_at }));
    },
    async findEvent(appId: string, id: string): Promise<StoredEvent | null> {
      const [row] = await db.query<{ id: string; type: string; body: string; created_at: Date }>(
        'SELECT id, type, body, created_at FROM webhook_events WHERE id = $1 AND app_id = $2 AND endpoint_id IS NULL',
        [id, appId],
      );
      return row ? { id: row.id, type: row.type, body: row.body, createdAt: row.created_at } : null;
    },
    /**
     * Removes up to `batch` events created before `eventsBefore` that no delivery still waits to send
     * (their deliveries and log go with them), and up to `batch` finished deliveries created before
     * `deliveriesBefore` (with their log); the numbers removed.
     */
    async purgeBatch(
      eventsBefore: Date,
      deliveriesBefore: Date,
      batch: number,
    ): Promise<{ events: number; deliveries: number }> {
      const events = await db.query(
        `DELETE FROM webhook_events WHERE id IN (
           SELECT e.id FROM webhook_events e WHERE e.created_at < $1
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
           LIMIT $2) RETURNING id`,
        [eventsBefore, batch],
      );
      const deliveries = await db.query(
        `DELETE FROM webhook_deliveries WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1 LIMIT $2) RETURNING id`,
        [deliveriesBefore, batch],
      );
      return { events: events.length, deliveries: deliveries.length };
    },
  };
}
