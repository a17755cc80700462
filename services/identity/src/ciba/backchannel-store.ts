import type { Db, Queryable } from '@attest/common';
import type { AuthorizationDetail } from './authorization-details';

export type BackchannelStatus = 'pending' | 'approved' | 'denied' | 'redeemed';

/** One backchannel authentication request (CIBA Core §7), as stored (its auth_req_id only as a hash). */
export interface BackchannelRequest {
  id: string;
  authReqHash: string;
  appId: string;
  userId: string;
  sub: string;
  scopes: string[];
  bindingMessage: string | null;
  acrValues: string[];
  authorizationDetails: AuthorizationDetail[] | null;
  /** Ping mode: the auth_req_id and the client_notification_token, sealed (encrypt()); null otherwise. */
  notification: string | null;
  status: BackchannelStatus;
  createdAt: Date;
  expiresAt: Date;
  decidedAt: Date | null;
  acr: string | null;
  amr: string[] | null;
}

interface Row {
  id: string;
  auth_req_hash: string;
  app_id: string;
  user_id: string;
  sub: string;
  scopes: string[];
  binding_message: string | null;
  acr_values: string[];
  authorization_details: AuthorizationDetail[] | null;
  notification_token: string | null;
  status: BackchannelStatus;
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
  acr: string | null;
  amr: string[] | null;
}

const toRequest = (r: Row): BackchannelRequest => ({
  id: r.id,
  authReqHash: r.auth_req_hash,
  appId: r.app_id,
  userId: r.user_id,
  sub: r.sub,
  scopes: r.scopes,
  bindingMessage: r.binding_message,
  acrValues: r.acr_values,
  authorizationDetails: r.authorization_details,
  notification: r.notification_token,
  status: r.status,
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
  decidedAt: r.decided_at ? new Date(r.decided_at) : null,
  acr: r.acr,
  amr: r.amr,
});

export type NewBackchannelRequest = Omit<BackchannelRequest, 'status' | 'decidedAt' | 'acr' | 'amr'>;

/** The backchannel_requests table (migration 025). Every change of state is one conditional UPDATE. */
export function backchannelStore(db: Db) {
  const store = backchannelQueries(db);
  return {
    ...store,
    /**
     * Inserts the request unless `max` of its app already wait for its person; false then. Counted and
     * inserted under a lock of that person and app (transaction-scoped, so across replicas too): requests sent
     * at once cannot pass the cap together.
     */
    async insertWithin(r: NewBackchannelRequest, max: number): Promise<boolean> {
      return db.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`attest:ciba:${r.userId}:${r.appId}`]);
        const inTx = backchannelQueries(tx);
        if ((await inTx.countPending(r.userId, r.createdAt, r.appId)) >= max) return false;
        await inTx.insert(r);
        return true;
      });
    },
  };
}

function backchannelQueries(db: Queryable) {
  return {
    async insert(r: NewBackchannelRequest): Promise<void> {
      await db.query(
        `INSERT INTO backchannel_requests (id, auth_req_hash, app_id, user_id, sub, scopes, binding_message, acr_values,
           authorization_details, notification_token, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [
          r.id,
          r.authReqHash,
          r.appId,
          r.userId,
          r.sub,
          r.scopes,
          r.bindingMessage,
          r.acrValues,
          r.authorizationDetails === null ? null : JSON.stringify(r.authorizationDetails),
          r.notification,
          r.createdAt,
          r.expiresAt,
        ],
      );
    },
    async findByHash(authReqHash: string): Promise<BackchannelRequest | null> {
      const [row] = await db.query<Row>('SELECT * FROM backchannel_requests WHERE auth_req_hash = $1', [authReqHash]);
      return row ? toRequest(row) : null;
    },
    /** The person's requests still waiting for them, oldest first. */
    async pendingFor(userId: string, now: Date, limit = 20): Promise<BackchannelRequest[]> {
      const rows = await db.query<Row>(
        `SELECT * FROM backchannel_requests WHERE user_id = $1 AND status = 'pending' AND expires_at > $2
         ORDER BY created_at, id LIMIT $3`,
        [userId, now, limit],
      );
      return rows.map(toRequest);
    },
    /** How many of the person's requests wait (of one app, when given). */
    async countPending(userId: string, now: Date, appId: string | null = null): Promise<number> {
      const [row] = await db.query<{ n: number | string }>(
        `SELECT count(*) AS n FROM backchannel_requests
         WHERE user_id = $1 AND status = 'pending' AND expires_at > $2 AND ($3::text IS NULL OR app_id = $3)`,
        [userId, now, appId],
      );
      return Number(row?.n ?? 0);
    },
    /** pending → approved or denied, once, by its person, before it expires; the request, or null. */
    async decide(
      id: string,
      userId: string,
      decision: { status: 'approved' | 'denied'; acr?: string; amr?: string[] },
      now: Date,
    ): Promise<BackchannelRequest | null> {
      const [row] = await db.query<Row>(
        `UPDATE backchannel_requests SET status = $3, decided_at = $4, acr = $5, amr = $6
         WHERE id = $1 AND user_id = $2 AND status = 'pending' AND expires_at > $4 RETURNING *`,
        [id, userId, decision.status, now, decision.acr ?? null, decision.amr ?? null],
      );
      return row ? toRequest(row) : null;
    },
    /** approved → redeemed, once across every replica, by its app, before it expires; the request, or null. */
    async redeem(authReqHash: string, appId: string, now: Date): Promise<BackchannelRequest | null> {
      const [row] = await db.query<Row>(
        `UPDATE backchannel_requests SET status = 'redeemed'
         WHERE auth_req_hash = $1 AND app_id = $2 AND status = 'approved' AND expires_at > $3 RETURNING *`,
        [authReqHash, appId, now],
      );
      return row ? toRequest(row) : null;
    },
    /** Requests expired for a day: nothing asks about them any more. */
    async prune(before: Date): Promise<number> {
      const rows = await db.query('DELETE FROM backchannel_requests WHERE expires_at < $1 RETURNING 1', [before]);
      return rows.length;
    },
  };
}
export type BackchannelStore = ReturnType<typeof backchannelStore>;
