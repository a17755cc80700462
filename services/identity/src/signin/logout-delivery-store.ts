import type { Queryable } from '@attest/common';

export interface LogoutDelivery {
  id: string;
  appId: string;
  uri: string;
  sub: string;
  sid: string;
  attempts: number;
}

interface Row {
  id: string;
  app_id: string;
  uri: string;
  sub: string;
  sid: string;
  attempts: number;
}

const toDelivery = (r: Row): LogoutDelivery => ({
  id: String(r.id),
  appId: r.app_id,
  uri: r.uri,
  sub: r.sub,
  sid: r.sid,
  attempts: r.attempts,
});

/** The back-channel logout outbox. Times come from the caller's clock. */
export function logoutDeliveryStore(db: Queryable) {
  return {
    async enqueue(deliveries: Omit<LogoutDelivery, 'id' | 'attempts'>[], now: Date): Promise<void> {
      if (deliveries.length === 0) return;
      await db.query(
        `INSERT INTO logout_deliveries (app_id, uri, sub, sid, next_attempt_at)
         SELECT a, u, s, i, $5::timestamptz FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS d (a, u, s, i)`,
        [
          deliveries.map((d) => d.appId),
          deliveries.map((d) => d.uri),
          deliveries.map((d) => d.sub),
          deliveries.map((d) => d.sid),
          now,
        ],
      );
    },
    /** The back-channel logout URIs of those apps that registered one. */
    async backchannelUris(appIds: string[]): Promise<Map<string, string>> {
      if (appIds.length === 0) return new Map();
      const rows = await db.query<{ id: string; backchannel_logout_uri: string }>(
        'SELECT id, backchannel_logout_uri FROM apps WHERE id = ANY ($1) AND backchannel_logout_uri IS NOT NULL',
        [appIds],
      );
      return new Map(rows.map((r) => [r.id, r.backchannel_logout_uri]));
    },
    /** Leases due deliveries; SKIP LOCKED and the lease keep replicas from sending the same one at once. */
    async leaseDue(now: Date, limit: number, leaseMs: number): Promise<LogoutDelivery[]> {
      const rows = await db.query<Row>(
        `UPDATE logout_deliveries SET lease_until = $1::timestamptz + $3 * interval '1 millisecond'
         WHERE id IN (
           SELECT id FROM logout_deliveries
           WHERE gave_up_at IS NULL AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until < $1)
           ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING id, app_id, uri, sub, sid, attempts`,
        [now, limit, leaseMs],
      );
      return rows.map(toDelivery);
    },
    async delivered(id: string): Promise<void> {
      await db.query('DELETE FROM logout_deliveries WHERE id = $1', [id]);
    },
    /** A failed attempt: tried again at `retryAt`, or never (null) once the attempts are spent. */
    async failed(id: string, error: string, retryAt: Date | null, now: Date): Promise<void> {
      await db.query(
        `UPDATE logout_deliveries SET attempts = attempts + 1, last_error = $2, lease_until = NULL,
           next_attempt_at = coalesce($3, next_attempt_at), gave_up_at = CASE WHEN $3::timestamptz IS NULL THEN $4::timestamptz END
         WHERE id = $1`,
        [id, error.slice(0, 500), retryAt, now],
      );
    },
    async pending(): Promise<(LogoutDelivery & { nextAttemptAt: Date; lastError: string | null; gaveUp: boolean })[]> {
      const rows = await db.query<Row & { next_attempt_at: Date; last_error: string | null; gave_up_at: Date | null }>(
        'SELECT * FROM logout_deliveries ORDER BY id',
      );
      return rows.map((r) => ({
        ...toDelivery(r),
        nextAttemptAt: r.next_attempt_at,
        lastError: r.last_error,
        gaveUp: r.gave_up_at !== null,
      }));
    },
  };
}
export type LogoutDeliveryStore = ReturnType<typeof logoutDeliveryStore>;
