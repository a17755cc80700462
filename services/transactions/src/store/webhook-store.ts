import type { Queryable } from '@attest/common';
import { typeMatchesSql } from '../domain/webhook-filters';

export interface WebhookEndpoint {
  id: string;
  appId: string;
  url: string;
  secretEnc: string;
  previousSecretEnc: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  failingSince: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  description: string | null;
  /** The event types (or `family.*` wildcards) delivered to it; null: every type. */
  enabledEvents: string[] | null;
  /** Failed attempts in a row (throttling answers not counted). */
  consecutiveFailures: number;
  /** When this failing streak was reported (webhook_endpoint.failing); null while it was not. */
  failingNotifiedAt: Date | null;
  /** A 429/502/503/504 paused every delivery to it until then. */
  throttledUntil: Date | null;
}

export interface WebhookEvent {
  id: string;
  appId: string;
  type: string;
  /** The transaction it is about; null for events about no transaction (payment requests, test, endpoint notifications). */
  transactionId: string | null;
  /** The payment request the event is about (payment_request.* events). */
  paymentRequestId?: string | null;
  body: string;
}

/** An event as the events list answers it. */
export interface StoredEvent {
  id: string;
  type: string;
  body: string;
  createdAt: Date;
}

/** A place in the events list: after the event with this writing transaction id and sequence number. */
export interface EventCursor {
  tx: string;
  seq: string;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface WebhookAttempt {
  deliveryId: string;
  attempt: number;
  startedAt: Date;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
}

/** A leased delivery with what the worker needs to send it. */
export interface DueDelivery {
  id: string;
  attempts: number;
  eventId: string;
  body: string;
  eventCreatedAt: Date;
  endpoint: WebhookEndpoint;
}

interface EndpointRow {
  id: string;
  app_id: string;
  url: string;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  description: string | null;
  enabled_events: string[] | null;
  consecutive_failures: number;
  failing_notified_at: Date | null;
  throttled_until: Date | null;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  finished_at: Date | null;
}

const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  appId: r.app_id,
  url: r.url,
  secretEnc: r.secret_enc,
  previousSecretEnc: r.previous_secret_enc,
  previousSecretExpiresAt: r.previous_secret_expires_at,
  createdAt: r.created_at,
  failingSince: r.failing_since,
  disabledAt: r.disabled_at,
  disabledReason: r.disabled_reason,
  description: r.description,
  enabledEvents: r.enabled_events,
  consecutiveFailures: r.consecutive_failures,
  failingNotifiedAt: r.failing_notified_at,
  throttledUntil: r.throttled_until,
});

const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  eventId: r.event_id,
  eventType: r.event_type,
  endpointId: r.endpoint_id,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
});

// A delivery id from inside SQL, so fan-out and replay make them in one statement.
const NEW_DELIVERY_ID = "'whd_' || replace(gen_random_uuid()::text, '-', '')";

const DELIVERY_COLUMNS =
  'd.id, d.event_id, e.type AS event_type, d.endpoint_id, d.status, d.attempts, d.next_attempt_at, d.last_status_code, d.last_error, d.created_at, d.finished_at';

export interface AttemptRecord {
  delivery: DueDelivery;
  startedAt: Date;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  /** pending: try again at nextAttemptAt; succeeded or failed: done. */
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  /** Disable the endpoint, for this reason. */
  disable: string | null;
  /** A throttling answer (429/502/503/504): pause the endpoint until then; not counted as a failure in a row. */
  throttleUntil: Date | null;
  /** Report the endpoint as failing after this many failed attempts in a row. */
  failingAfter: number;
}

/** What an attempt changed in its endpoint's health: it began failing (reported once per streak), or was disabled. */
export interface EndpointChange {
  failing: WebhookEndpoint | null;
  disabled: WebhookEndpoint | null;
}

/** Fields of an endpoint an update may change (undefined: unchanged). */
export interface EndpointPatch {
  url?: string;
  description?: string | null;
  enabledEvents?: string[] | null;
}

/** Where an event goes: every matching enabled endpoint of its app, but not `except`; or only to `only`. */
export interface EventRouting {
  only?: string;
  except?: string;
}

export function webhookStore(db: Queryable) {
  return {
    async insertEndpoint(e: {
      id: string;
      appId: string;
      url: string;
      secretEnc: string;
      description?: string | null;
      enabledEvents?: string[] | null;
    }): Promise<WebhookEndpoint | null> {
      // null: the app has its 20 endpoints (the trigger of migration 011 skips the row, under the count's lock)
      const [row] = await db.query<EndpointRow>(
        `INSERT INTO webhook_endpoints (id, app_id, url, secret_enc, description, enabled_events)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
        [e.id, e.appId, e.url, e.secretEnc, e.description ?? null, e.enabledEvents ?? null],
      );
      return row ? toEndpoint(row) : null;
    },
    async updateEndpoint(id: string, patch: EndpointPatch): Promise<WebhookEndpoint | null> {
      const [row] = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET url = CASE WHEN $2 THEN $3 ELSE url END,
           description = CASE WHEN $4 THEN $5 ELSE description END,
           enabled_events = CASE WHEN $6 THEN $7::text[] ELSE enabled_events END
         WHERE id = $1 RETURNING *`,
        [
          id,
          patch.url !== undefined,
          patch.url ?? null,
          patch.description !== undefined,
          patch.description ?? null,
          patch.enabledEvents !== undefined,
          patch.enabledEvents ?? null,
        ],
      );
      return row ? toEndpoint(row) : null;
    },
    /** Disables an enabled endpoint (its deliveries wait; no new ones are made); null when there is none. */
    async disableEndpoint(id: string, reason: string): Promise<{ endpoint: WebhookEndpoint; changed: boolean } | null> {
      const [row] = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2 WHERE id = $1 AND disabled_at IS NULL RETURNING *`,
        [id, reason],
      );
      if (row) return { endpoint: toEndpoint(row), changed: true };
      const endpoint = await this.findEndpoint(id);
      return endpoint && { endpoint, changed: false };
    },
    /**
     * Enables an endpoint again with its secret and history; its health starts afresh (not failing, not
     * throttled). Deliveries that waited are sent.
     */
    async enableEndpoint(id: string): Promise<{ endpoint: WebhookEndpoint; changed: boolean } | null> {
      const [row] = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL,
           consecutive_failures = 0, failing_notified_at = NULL, throttled_until = NULL
         WHERE id = $1 AND disabled_at IS NOT NULL RETURNING *`,
        [id],
      );
      if (row) return { endpoint: toEndpoint(row), changed: true };
      const endpoint = await this.findEndpoint(id);
      return endpoint && { endpoint, changed: false };
    },
    async findEndpoint(id: string): Promise<WebhookEndpoint | null> {
      const [row] = await db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1', [id]);
      return row ? toEndpoint(row) : null;
    },
    async listEndpoints(appId: string): Promise<WebhookEndpoint[]> {
      return (
        await db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE app_id = $1 ORDER BY created_at, id', [
          appId,
        ])
      ).map(toEndpoint);
    },
    /** Removes the endpoint with its deliveries and their log. */
    async removeEndpoint(id: string): Promise<WebhookEndpoint | null> {
      const [row] = await db.query<EndpointRow>('DELETE FROM webhook_endpoints WHERE id = $1 RETURNING *', [id]);
      return row ? toEndpoint(row) : null;
    },
    async rotateSecret(id: string, secretEnc: string, previousValidMs: number): Promise<WebhookEndpoint | null> {
      const [row] = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET previous_secret_enc = secret_enc, secret_enc = $2,
           previous_secret_expires_at = now() + $3 * interval '1 millisecond'
         WHERE id = $1 RETURNING *`,
        [id, secretEnc, previousValidMs],
      );
      return row ? toEndpoint(row) : null;
    },

    /**
     * Writes an event to the outbox with a delivery for each enabled endpoint of its app. Runs in the
     * transaction of the change it describes, so it commits, or rolls back, with it.
     */
    async addEvent(event: WebhookEvent, routing: EventRouting = {}): Promise<void> {
      await db.query(
        `WITH event AS (
           INSERT INTO webhook_events (id, app_id, type, transaction_id, payment_request_id, body, endpoint_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           RETURNING id, app_id, type)
         INSERT INTO webhook_deliveries (id, event_id, endpoint_id)
         SELECT ${NEW_DELIVERY_ID}, event.id, w.id FROM event JOIN webhook_endpoints w ON w.app_id = event.app_id AND w.disabled_at IS NULL
         WHERE CASE WHEN $7::text IS NOT NULL THEN w.id = $7
           ELSE w.id IS DISTINCT FROM $8 AND ${typeMatchesSql('event.type', 'w.enabled_events')} END`,
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
        'INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, error, latency_ms) VALUES ($1, $2, $3, $4, $5, $6)',
        [a.delivery.id, attempt, a.startedAt, a.statusCode, a.error, a.latencyMs],
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

    async listDeliveries(endpointId: string, limit: number): Promise<WebhookDelivery[]> {
      const rows = await db.query<DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
         WHERE d.endpoint_id = $1 ORDER BY d.created_at DESC, d.id DESC LIMIT $2`,
        [endpointId, limit],
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
      }>(
        'SELECT delivery_id, attempt, started_at, status_code, error, latency_ms FROM webhook_attempts WHERE delivery_id = ANY($1) ORDER BY id',
        [deliveryIds],
      );
      return rows.map((r) => ({
        deliveryId: r.delivery_id,
        attempt: r.attempt,
        startedAt: r.started_at,
        statusCode: r.status_code,
        error: r.error,
        latencyMs: r.latency_ms,
      }));
    },

    /** Ends the endpoint's throttling now (someone asked for a delivery to it). */
    async liftThrottle(endpointId: string): Promise<void> {
      await db.query(
        'UPDATE webhook_endpoints SET throttled_until = NULL WHERE id = $1 AND throttled_until IS NOT NULL',
        [endpointId],
      );
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
export type WebhookStore = ReturnType<typeof webhookStore>;
