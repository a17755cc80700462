import { preparedStatement, type Queryable } from '../db';

/** Who acted: an operator (admin token name), a signed-in user, an app (its API key), a worker, or nobody known. */
export type ActorType = 'operator' | 'user' | 'app' | 'system' | 'anonymous';

/** Who did it: an operator (admin token name), a user (user id), a system worker, or nobody known. */
export interface AuditActor {
  type: ActorType;
  id: string | null;
  requestId?: string | null;
  clientAddress?: string | null;
}

/** One thing that happened; `type` is `<noun>.<past-tense verb>` (`user.disabled`, `signin.failed`). */
export interface AuditEvent {
  type: string;
  actor: AuditActor;
  /** What it happened to: an app id, a user id, a key id… */
  subject?: string | null;
  /** Facts that help a reader; never a secret, a token or a password. */
  detail?: Record<string, unknown>;
}

export interface StoredAuditEvent {
  id: string;
  at: Date;
  type: string;
  actorType: ActorType;
  actor: string | null;
  subject: string | null;
  requestId: string | null;
  clientAddress: string | null;
  detail: Record<string, unknown>;
}

export interface AuditQuery {
  since?: Date;
  types?: string[];
  /** Events older than this one (the id of the last event of the previous page). */
  before?: string;
  limit: number;
}

interface Row {
  id: string;
  at: Date;
  type: string;
  actor_type: ActorType;
  actor: string | null;
  subject: string | null;
  request_id: string | null;
  client_address: string | null;
  detail: Record<string, unknown>;
}

const toEvent = (r: Row): StoredAuditEvent => ({
  id: String(r.id),
  at: r.at,
  type: r.type,
  actorType: r.actor_type,
  actor: r.actor,
  subject: r.subject,
  requestId: r.request_id,
  clientAddress: r.client_address,
  detail: r.detail,
});

/** The insert of events in the order given (ids ascending); its one parameter is `insertDocument(events)`. */
export const INSERT_EVENTS = `INSERT INTO audit_events (type, actor_type, actor, subject, request_id, client_address, detail)
  SELECT e.type, e.actor_type, e.actor, e.subject, e.request_id, e.client_address, e.detail
  FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (type text, actor_type text, actor text, subject text,
    request_id text, client_address text, detail jsonb))
    WITH ORDINALITY AS e(type, actor_type, actor, subject, request_id, client_address, detail, n)
  ORDER BY n`;

/** INSERT_EVENTS's parameter: a JSON array of objects, one per event. */
export const insertDocument = (events: readonly AuditEvent[]) =>
  JSON.stringify(
    events.map((e) => ({
      type: e.type,
      actor_type: e.actor.type,
      actor: e.actor.id,
      subject: e.subject ?? null,
      request_id: e.actor.requestId ?? null,
      client_address: e.actor.clientAddress ?? null,
      detail: e.detail ?? {},
    })),
  );

/** audit_events (each service's own schema): appended to, read newest first, purged by age only. */
export function auditStore(db: Queryable) {
  return {
    async insert(events: readonly AuditEvent[]): Promise<void> {
      if (events.length === 0) return;
      // one text whatever the number of events, so it is one prepared statement on the embedded database (see
      // preparedStatement): one event in its change's transaction, or the events recorded together. The events
      // go as one JSON document: measured in PGlite (13 token-exchange events a statement), ~25 % less CPU a
      // statement than seven arrays, whose elements (each detail a JSON text) pg escapes one by one and
      // Postgres parses twice.
      await db.query(preparedStatement(INSERT_EVENTS), [insertDocument(events)]);
    },
    async list(q: AuditQuery): Promise<StoredAuditEvent[]> {
      const rows = await db.query<Row>(
        `SELECT * FROM audit_events
         WHERE ($1::timestamptz IS NULL OR at >= $1) AND ($2::text[] IS NULL OR type = ANY($2)) AND ($3::bigint IS NULL OR id < $3)
         ORDER BY id DESC LIMIT $4`,
        [q.since ?? null, q.types ?? null, q.before ?? null, q.limit],
      );
      return rows.map(toEvent);
    },
    /** Deletes events older than the retention; returns how many went. */
    async purge(retentionDays: number): Promise<number> {
      const rows = await db.query(`DELETE FROM audit_events WHERE at < now() - $1 * interval '1 day' RETURNING 1`, [
        retentionDays,
      ]);
      return rows.length;
    },
  };
}
export type AuditStore = ReturnType<typeof auditStore>;
