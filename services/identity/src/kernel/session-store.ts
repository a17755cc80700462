import type { Queryable } from '@attest/common';

export interface StoredSession {
  /** Public session id: shown on the account page, the base of each app's `sid`. Not a credential. */
  id: string;
  cookieHash: string;
  userId: string;
  /** Seconds since the epoch. */
  authTime: number;
  amr: string[];
  clientIds: string[];
  /** "Firefox on Linux": a summary of the user agent, for display. */
  device: string | null;
  address: string | null;
  /** Milliseconds since the epoch, from here down. */
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

interface Row {
  id: string;
  cookie_hash: string;
  user_id: string;
  auth_time: Date;
  amr: string[];
  client_ids: string[];
  device: string | null;
  address: string | null;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
}

const toSession = (r: Row): StoredSession => ({
  id: r.id,
  cookieHash: r.cookie_hash,
  userId: r.user_id,
  authTime: Math.floor(r.auth_time.getTime() / 1000),
  amr: r.amr,
  clientIds: r.client_ids,
  device: r.device,
  address: r.address,
  createdAt: r.created_at.getTime(),
  lastSeenAt: r.last_seen_at.getTime(),
  expiresAt: r.expires_at.getTime(),
});

/** Browser sessions; `idleBefore`: sessions not seen since then have expired (idle timeout). */
export function sessionStore(db: Queryable) {
  return {
    async insert(s: StoredSession): Promise<void> {
      await db.query(
        `INSERT INTO sessions (id, cookie_hash, user_id, auth_time, amr, client_ids, device, address, created_at, last_seen_at, expires_at)
         VALUES ($1, $2, $3, to_timestamp($4), $5, $6, $7, $8, $9, $10, $11)`,
        [
          s.id,
          s.cookieHash,
          s.userId,
          s.authTime,
          s.amr,
          s.clientIds,
          s.device,
          s.address,
          new Date(s.createdAt),
          new Date(s.lastSeenAt),
          new Date(s.expiresAt),
        ],
      );
    },
    async findByCookieHash(cookieHash: string): Promise<StoredSession | null> {
      const [row] = await db.query<Row>('SELECT * FROM sessions WHERE cookie_hash = $1', [cookieHash]);
      return row ? toSession(row) : null;
    },
    /** The user's sessions that have not expired, most recently used first. */
    async listForUser(userId: string, now: Date, idleBefore: Date): Promise<StoredSession[]> {
      const rows = await db.query<Row>(
        `SELECT * FROM sessions WHERE user_id = $1 AND expires_at > $2 AND last_seen_at > $3
         ORDER BY last_seen_at DESC, id`,
        [userId, now, idleBefore],
      );
      return rows.map(toSession);
    },
    async touch(id: string, lastSeenAt: Date): Promise<void> {
      await db.query('UPDATE sessions SET last_seen_at = greatest(last_seen_at, $2) WHERE id = $1', [id, lastSeenAt]);
    },
    async addClient(id: string, clientId: string): Promise<void> {
      await db.query(
        'UPDATE sessions SET client_ids = array_append(client_ids, $2) WHERE id = $1 AND NOT ($2 = ANY (client_ids))',
        [id, clientId],
      );
    },
    /** Deletes the sessions and returns them (to notify the apps they signed in to). */
    async delete(where: {
      id?: string;
      cookieHash?: string;
      userId?: string;
      exceptId?: string;
    }): Promise<StoredSession[]> {
      const rows = await db.query<Row>(
        `DELETE FROM sessions
         WHERE ($1::text IS NULL OR id = $1) AND ($2::text IS NULL OR cookie_hash = $2)
           AND ($3::text IS NULL OR user_id = $3) AND ($4::text IS NULL OR id <> $4)
           AND ($1::text IS NOT NULL OR $2::text IS NOT NULL OR $3::text IS NOT NULL)
         RETURNING *`,
        [where.id ?? null, where.cookieHash ?? null, where.userId ?? null, where.exceptId ?? null],
      );
      return rows.map(toSession);
    },
    /** Drops expired sessions; returns their cookie hashes. */
    async prune(now: Date, idleBefore: Date): Promise<string[]> {
      const rows = await db.query<{ cookie_hash: string }>(
        'DELETE FROM sessions WHERE expires_at <= $1 OR last_seen_at <= $2 RETURNING cookie_hash',
        [now, idleBefore],
      );
      return rows.map((r) => r.cookie_hash);
    },
  };
}
export type SessionStore = ReturnType<typeof sessionStore>;
