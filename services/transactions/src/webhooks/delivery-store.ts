import type { Queryable } from '@attest/common';
import {
  DELIVERY_COLUMNS,
  NEW_DELIVERY_ID,
  toDelivery,
  toEndpoint,
  type DeliveryRow,
  type EndpointRow,
} from './webhook-rows';
import {
  LOG_BODY_LIMIT,
  type AttemptRecord,
  type DueDelivery,
  type EndpointChange,
  type WebhookAttempt,
  type WebhookDelivery,
} from './webhook-types';

/** Deliveries of events to endpoints: leased and attempted by the worker, logged, sent again on request. SQL only. */
export function deliveryStore(db: Queryable) {
  return {
    /**
     * Leases up to `limit` due deliveries of enabled endpoints for `leaseMs`; SKIP LOCKED and the lease
     * keep replicas from sending the same delivery at once. An attempt cut short (a crash) is retried
     * when the lease runs out. Deliveries of a disabled app (disabled_apps) wait until it is enabled.
     */
    async leaseDue(limit: number, leaseMs: number): Promise<DueDelivery[]> {
      const rows = await db.query<
        EndpointRow & { delivery_id: string; attempts: number; event_id: string; body: string; event_created_at: Date }
      >(
        `WITH due AS (
           UPDATE webhook_deliveries SET lease_until = now() + $2 * interval '1 millisecond'
           WHERE id IN (
             SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
             WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until < now())
               AND w.disabled_at IS NULL AND (w.throttled_until IS NULL OR w.throttled_until <= now())
               AND NOT EXISTS (SELECT 1 FROM disabled_apps a WHERE a.app_id = w.app_id)
             ORDER BY d.next_attempt_at LIMIT $1 FOR UPDATE OF d SKIP LOCKED)
           RETURNING id, attempts, event_id, endpoint_id)
         SELECT due.id AS delivery_id, due.attempts, due.event_id, e.body, e.created_at AS event_created_at, w.*
         FROM due JOIN webhook_events e ON e.id = due.event_id JOIN webhook_endpoints w ON w.id = due.endpoint_id`,
        [limit, leaseMs],
      );
      return rows.map((r) => ({
        id: r.delivery_id,
        attempts: r.attempts,
        eventId: r.event_id,
        body: r.body,
        eventCreatedAt: r.event_created_at,
        endpoint: toEndpoint(r),
      }));
    },
    /** Gives a leased delivery back without counting an attempt (the worker is stopping). */
    async release(id: string): Promise<void> {
      await db.query('UPDATE webhook_deliveries SET lease_until = NULL WHERE id = $1', [id]);
    },
    /**
     * Records an attempt (call inside a transaction): the log line, the delivery's next state, and the
     * endpoint's health. Null when the delivery changed meanwhile (removed, or taken over after its
     * lease ran out), in which case nothing is written; else what changed in the endpoint's health.
     */
    async recordAttempt(a: AttemptRecord): Promise<EndpointChange | null> {
      const attempt = a.delivery.attempts + 1;
      const updated = await db.query(
        `UPDATE webhook_deliveries SET attempts = $3, status = $4, next_attempt_at = coalesce($5, next_attempt_at), lease_until = NULL,
           last_status_code = $6, last_error = $7, finished_at = CASE WHEN $4 = 'pending' THEN NULL ELSE now() END
         WHERE id = $1 AND attempts = $2 AND status = 'pending' RETURNING id`,
        [a.delivery.id, a.delivery.attempts, attempt, a.status, a.nextAttemptAt, a.statusCode, a.error],
      );
      if (updated.length === 0) return null;
      await db.query(
        `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, error, latency_ms, response_body, response_body_truncated)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          a.delivery.id,
          attempt,
          a.startedAt,
          a.statusCode,
          a.error,
          a.latencyMs,
          a.responseBody,
          a.responseBodyTruncated,
        ],
      );
      const endpointId = a.delivery.endpoint.id;
      const change: EndpointChange = { failing: null, disabled: null };
      if (a.disable) {
        const [row] = await db.query<EndpointRow>(
          'UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2 WHERE id = $1 AND disabled_at IS NULL RETURNING *',
          [endpointId, a.disable],
        );
        change.disabled = row ? toEndpoint(row) : null;
      } else if (a.status === 'succeeded')
        await db.query(
          `UPDATE webhook_endpoints SET failing_since = NULL, consecutive_failures = 0, failing_notified_at = NULL
           WHERE id = $1 AND (failing_since IS NOT NULL OR consecutive_failures > 0 OR failing_notified_at IS NOT NULL)`,
          [endpointId],
        );
      else {
        // a failure: the streak grows (a throttling answer pauses the endpoint instead); the endpoint is
        // reported failing once per streak, at failingAfter failures in a row or when a delivery gives up
        const [row] = await db.query<EndpointRow & { newly_failing: boolean }>(
          `WITH before AS (SELECT failing_notified_at FROM webhook_endpoints WHERE id = $1)
           UPDATE webhook_endpoints w SET failing_since = coalesce(w.failing_since, $2),
             consecutive_failures = w.consecutive_failures + CASE WHEN $3::timestamptz IS NULL THEN 1 ELSE 0 END,
             throttled_until = CASE WHEN $3::timestamptz IS NULL THEN w.throttled_until ELSE greatest(w.throttled_until, $3) END,
             failing_notified_at = CASE WHEN w.failing_notified_at IS NULL AND
               (w.consecutive_failures + CASE WHEN $3::timestamptz IS NULL THEN 1 ELSE 0 END >= $4 OR $5)
               THEN now() ELSE w.failing_notified_at END
           FROM before WHERE w.id = $1
           RETURNING w.*, (before.failing_notified_at IS NULL AND w.failing_notified_at IS NOT NULL) AS newly_failing`,
          [endpointId, a.startedAt, a.throttleUntil, a.failingAfter, a.status === 'failed'],
        );
        change.failing = row?.newly_failing ? toEndpoint(row) : null;
      }
      return change;
    },
    /** Newest first; with `before`, those older than that delivery of this endpoint (the next page). */
    async listDeliveries(endpointId: string, limit: number, before?: string): Promise<WebhookDelivery[]> {
      const rows = await db.query<DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
         WHERE d.endpoint_id = $1 AND ($3::text IS NULL OR (d.created_at, d.id) <
           (SELECT created_at, id FROM webhook_deliveries WHERE id = $3 AND endpoint_id = $1))
         ORDER BY d.created_at DESC, d.id DESC LIMIT $2`,
        [endpointId, limit, before ?? null],
      );
      return rows.map(toDelivery);
    },
    async findDelivery(id: string): Promise<WebhookDelivery | null> {
      const [row] = await db.query<DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.id = $1`,
        [id],
      );
      return row ? toDelivery(row) : null;
    },
    async attemptsOf(deliveryIds: string[]): Promise<WebhookAttempt[]> {
      if (deliveryIds.length === 0) return [];
      const rows = await db.query<{
        delivery_id: string;
        attempt: number;
        started_at: Date;
        status_code: number | null;
        error: string | null;
        latency_ms: number;
        request_body: string;
        request_body_truncated: boolean;
        response_body: string | null;
        response_body_truncated: boolean;
      }>(
        // the body sent is the event's, the same on every attempt: read from it, not copied per attempt
        `SELECT a.delivery_id, a.attempt, a.started_at, a.status_code, a.error, a.latency_ms,
           left(e.body, $2) AS request_body, length(e.body) > $2 AS request_body_truncated,
           a.response_body, a.response_body_truncated
         FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN webhook_events e ON e.id = d.event_id
         WHERE a.delivery_id = ANY($1) ORDER BY a.id`,
        [deliveryIds, LOG_BODY_LIMIT],
      );
      return rows.map((r) => ({
        deliveryId: r.delivery_id,
        attempt: r.attempt,
        startedAt: r.started_at,
        statusCode: r.status_code,
        error: r.error,
        latencyMs: r.latency_ms,
        requestBody: r.request_body,
        requestBodyTruncated: r.request_body_truncated,
        responseBody: r.response_body,
        responseBodyTruncated: r.response_body_truncated,
      }));
    },
    /** A new delivery of the same event to the same endpoint (same webhook-id), due now. */
    async redeliver(deliveryId: string): Promise<WebhookDelivery | null> {
      const [row] = await db.query<{ id: string }>(
        `INSERT INTO webhook_deliveries (id, event_id, endpoint_id)
         SELECT ${NEW_DELIVERY_ID}, event_id, endpoint_id FROM webhook_deliveries WHERE id = $1 RETURNING id`,
        [deliveryId],
      );
      return row ? this.findDelivery(row.id) : null;
    },
    /** New deliveries, due now, of every event of the app since `since` to each of its enabled endpoints. */
    async replay(appId: string, since: Date): Promise<{ deliveries: number; events: number }> {
      const [row] = await db.query<{ deliveries: string; events: string }>(
        `WITH added AS (
           INSERT INTO webhook_deliveries (id, event_id, endpoint_id)
           SELECT ${NEW_DELIVERY_ID}, e.id, w.id FROM webhook_events e JOIN webhook_endpoints w ON w.app_id = e.app_id AND w.disabled_at IS NULL
           WHERE e.app_id = $1 AND e.created_at >= $2
           RETURNING event_id)
         SELECT count(*) AS deliveries, count(DISTINCT event_id) AS events FROM added`,
        [appId, since],
      );
      return { deliveries: Number(row.deliveries), events: Number(row.events) };
    },
    /**
     * New deliveries, due now, to one endpoint of the events since `since` whose delivery to it failed
     * and that it has not received (nor is about to) since; the number of deliveries queued.
     */
    async recoverFailed(endpointId: string, since: Date): Promise<number> {
      const [row] = await db.query<{ deliveries: string }>(
        `WITH failed AS (
           SELECT DISTINCT d.event_id FROM webhook_deliveries d
           WHERE d.endpoint_id = $1 AND d.status = 'failed' AND d.created_at >= $2
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o
               WHERE o.endpoint_id = d.endpoint_id AND o.event_id = d.event_id AND o.status IN ('pending', 'succeeded'))),
         added AS (
           INSERT INTO webhook_deliveries (id, event_id, endpoint_id) SELECT ${NEW_DELIVERY_ID}, event_id, $1 FROM failed
           RETURNING id)
         SELECT count(*) AS deliveries FROM added`,
        [endpointId, since],
      );
      return Number(row.deliveries);
    },
  };
}
