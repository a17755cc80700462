import type { Queryable } from '@attest/common';

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
}

export interface WebhookEvent {
  id: string;
  appId: string;
  type: string;
  transactionId: string;
  body: string;
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
}

export function webhookStore(db: Queryable) {
  return {
    async insertEndpoint(e: { id: string; appId: string; url: string; secretEnc: string }): Promise<WebhookEndpoint> {
      const [row] = await db.query<EndpointRow>(
        'INSERT INTO webhook_endpoints (id, app_id, url, secret_enc) VALUES ($1, $2, $3, $4) RETURNING *',
        [e.id, e.appId, e.url, e.secretEnc],
      );
      return toEndpoint(row);
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
    async addEvent(event: WebhookEvent): Promise<void> {
      await db.query(
        `WITH event AS (
           INSERT INTO webhook_events (id, app_id, type, transaction_id, body) VALUES ($1, $2, $3, $4, $5) RETURNING id, app_id)
         INSERT INTO webhook_deliveries (id, event_id, endpoint_id)
         SELECT ${NEW_DELIVERY_ID}, event.id, w.id FROM event JOIN webhook_endpoints w ON w.app_id = event.app_id AND w.disabled_at IS NULL`,
        [event.id, event.appId, event.type, event.transactionId, event.body],
      );
    },
    async eventsOf(transactionId: string): Promise<WebhookEvent[]> {
      const rows = await db.query<{ id: string; app_id: string; type: string; transaction_id: string; body: string }>(
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
               AND w.disabled_at IS NULL AND NOT EXISTS (SELECT 1 FROM disabled_apps a WHERE a.app_id = w.app_id)
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
     * endpoint's health. False when the delivery changed meanwhile (removed, or taken over after its
     * lease ran out), in which case nothing is written.
     */
    async recordAttempt(a: AttemptRecord): Promise<boolean> {
      const attempt = a.delivery.attempts + 1;
      const updated = await db.query(
        `UPDATE webhook_deliveries SET attempts = $3, status = $4, next_attempt_at = coalesce($5, next_attempt_at), lease_until = NULL,
           last_status_code = $6, last_error = $7, finished_at = CASE WHEN $4 = 'pending' THEN NULL ELSE now() END
         WHERE id = $1 AND attempts = $2 AND status = 'pending' RETURNING id`,
        [a.delivery.id, a.delivery.attempts, attempt, a.status, a.nextAttemptAt, a.statusCode, a.error],
      );
      if (updated.length === 0) return false;
      await db.query(
        'INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, error, latency_ms) VALUES ($1, $2, $3, $4, $5, $6)',
        [a.delivery.id, attempt, a.startedAt, a.statusCode, a.error, a.latencyMs],
      );
      const endpointId = a.delivery.endpoint.id;
      if (a.disable)
        await db.query(
          'UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2 WHERE id = $1 AND disabled_at IS NULL',
          [endpointId, a.disable],
        );
      else if (a.status === 'succeeded')
        await db.query(
          'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL',
          [endpointId],
        );
      else
        await db.query('UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL', [
          endpointId,
          a.startedAt,
        ]);
      return true;
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
  };
}
export type WebhookStore = ReturnType<typeof webhookStore>;
