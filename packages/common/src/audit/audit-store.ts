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

/** audit_events (each service's own schema): appended to, read newest first, purged by age only. */
export function auditStore(db: Queryable) {
  return {
    async insert(events: AuditEvent[]): Promise<void> {
      if (events.length === 0) return;
      const values: unknown[] = [];
      const rows = events.map((e, i) => {
        values.push(
          e.type,
          e.actor.type,
          e.actor.id,
          e.subject ?? null,
          e.actor.requestId ?? null,
          e.actor.clientAddress ?? null,
          JSON.stringify(e.detail ?? {}),
        );
        const n = i * 7;
        return `($${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}, $${n + 7}::jsonb)`;
      });
      const text = `INSERT INTO audit_events (type, actor_type, actor, subject, request_id, client_address, detail) VALUES ${rows.join(', ')}`;
      // one event, recorded in the transaction of the change it describes, is the common case (see preparedStatement)
      await db.query(events.length === 1 ? preparedStatement(text) : text, values);
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
