import type { Queryable } from '@attest/common';
import type { ApprovedGrant } from '../oauth';
import type { DeviceRequest } from './device-request';

export type DeviceStatus = 'pending' | 'approved' | 'denied';

/** One device authorization (023_device_authorizations.sql): its codes only as keyed hashes. */
export interface DeviceAuthorization {
  deviceCodeHash: string;
  userCodeHash: string;
  clientId: string;
  request: DeviceRequest;
  status: DeviceStatus;
  userId: string | null;
  /** What the person approved, the tokens' source (approved only). */
  grant: ApprovedGrant | null;
  intervalSeconds: number;
  lastPolledAt: Date | null;
  createdAt: Date;
  expiresAt: Date;
  redeemedAt: Date | null;
}

interface DeviceRow {
  device_code_hash: string;
  user_code_hash: string;
  client_id: string;
  request: DeviceRequest | string;
  status: DeviceStatus;
  user_id: string | null;
  grant_data: ApprovedGrant | string | null;
  interval_seconds: number;
  last_polled_at: Date | null;
  created_at: Date;
  expires_at: Date;
  redeemed_at: Date | null;
}

const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

const toRecord = (r: DeviceRow): DeviceAuthorization => ({
  deviceCodeHash: r.device_code_hash,
  userCodeHash: r.user_code_hash,
  clientId: r.client_id,
  request: json(r.request),
  status: r.status,
  userId: r.user_id,
  grant: r.grant_data === null ? null : json(r.grant_data),
  intervalSeconds: r.interval_seconds,
  lastPolledAt: r.last_polled_at,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  redeemedAt: r.redeemed_at,
});

/** device_authorizations: every change is one statement, so replicas agree on a decision and a redemption. */
export function deviceStore(db: Queryable) {
  return {
    /** False when the user code's hash is taken (a collision: the caller draws another code). */
    async insert(
      r: Pick<
        DeviceAuthorization,
        'deviceCodeHash' | 'userCodeHash' | 'clientId' | 'request' | 'intervalSeconds' | 'createdAt' | 'expiresAt'
      >,
    ): Promise<boolean> {
      const rows = await db.query(
        `INSERT INTO device_authorizations
           (device_code_hash, user_code_hash, client_id, request, interval_seconds, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING 1`,
        [
          r.deviceCodeHash,
          r.userCodeHash,
          r.clientId,
          JSON.stringify(r.request),
          r.intervalSeconds,
          r.createdAt,
          r.expiresAt,
        ],
      );
      return rows.length === 1;
    },
    /** The authorization a user code names while it waits for the person's decision. */
    async findPending(userCodeHash: string, now: Date): Promise<DeviceAuthorization | null> {
      const [row] = await db.query<DeviceRow>(
        `SELECT * FROM device_authorizations WHERE user_code_hash = $1 AND status = 'pending' AND expires_at > $2`,
        [userCodeHash, now],
      );
      return row ? toRecord(row) : null;
    },
    /** The person's decision, once: false when it was decided already or has expired. */
    async decide(
      deviceCodeHash: string,
      decision: { status: 'approved' | 'denied'; userId: string; grant: ApprovedGrant | null },
      now: Date,
    ): Promise<boolean> {
      const rows = await db.query(
        `UPDATE device_authorizations SET status = $2, user_id = $3, grant_data = $4, decided_at = $5
         WHERE device_code_hash = $1 AND status = 'pending' AND expires_at > $5 RETURNING 1`,
        [
          deviceCodeHash,
          decision.status,
          decision.userId,
          decision.grant === null ? null : JSON.stringify(decision.grant),
          now,
        ],
      );
      return rows.length === 1;
    },
    /**
     * A poll by the client: remembers when, and adds 5 s to the interval when it came sooner than the
     * interval after the previous one (RFC 8628 §3.5, slow_down). Null for an unknown code or another
     * client's (nothing changes then).
     */
    async poll(
      deviceCodeHash: string,
      clientId: string,
      now: Date,
    ): Promise<{ record: DeviceAuthorization; slowDown: boolean } | null> {
      const [row] = await db.query<DeviceRow & { slow_down: boolean }>(
        `WITH before AS (
           SELECT device_code_hash, last_polled_at, interval_seconds FROM device_authorizations
           WHERE device_code_hash = $1 AND client_id = $2 FOR UPDATE
         ), polled AS (
           SELECT device_code_hash, interval_seconds,
                  (last_polled_at IS NOT NULL AND $3 < last_polled_at + interval_seconds * interval '1 second') AS slow_down
           FROM before
         )
         UPDATE device_authorizations d
         SET last_polled_at = $3,
             interval_seconds = CASE WHEN polled.slow_down THEN polled.interval_seconds + 5 ELSE polled.interval_seconds END
         FROM polled WHERE d.device_code_hash = polled.device_code_hash
         RETURNING d.*, polled.slow_down`,
        [deviceCodeHash, clientId, now],
      );
      return row ? { record: toRecord(row), slowDown: row.slow_down } : null;
    },
    /** The approved grant is redeemed once: true for exactly one caller, before it expires. */
    async redeem(deviceCodeHash: string, now: Date): Promise<boolean> {
      const rows = await db.query(
        `UPDATE device_authorizations SET redeemed_at = $2
         WHERE device_code_hash = $1 AND status = 'approved' AND redeemed_at IS NULL AND expires_at > $2 RETURNING 1`,
        [deviceCodeHash, now],
      );
      return rows.length === 1;
    },
    async prune(now: Date): Promise<number> {
      return (await db.query('DELETE FROM device_authorizations WHERE expires_at <= $1 RETURNING 1', [now])).length;
    },
  };
}
export type DeviceStore = ReturnType<typeof deviceStore>;
