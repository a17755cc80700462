import type { Queryable } from '@attest/common';

/** What a member of an app may do (016_app_members.sql): owner ⊃ developer ⊃ viewer. */
export type MemberRole = 'owner' | 'developer' | 'viewer';
export const MEMBER_ROLES: MemberRole[] = ['owner', 'developer', 'viewer'];

export interface Member {
  appId: string;
  userId: string;
  username: string;
  name: string | null;
  role: MemberRole;
  addedAt: Date;
  addedBy: string;
}

interface MemberRow {
  app_id: string;
  user_id: string;
  username: string;
  name: string | null;
  role: MemberRole;
  added_at: Date;
  added_by: string;
}

const toMember = (r: MemberRow): Member => ({
  appId: r.app_id,
  userId: r.user_id,
  username: r.username,
  name: r.name,
  role: r.role,
  addedAt: r.added_at,
  addedBy: r.added_by,
});

/** app_members: who belongs to which app's team, with which role. */
export function memberStore(db: Queryable) {
  return {
    /** Adds the person, or changes their role; null when the app or the user does not exist. */
    async put(appId: string, userId: string, role: MemberRole, addedBy: string): Promise<Member | null> {
      const rows = await db.query<{ app_id: string }>(
        `INSERT INTO app_members (app_id, user_id, role, added_by)
         SELECT a.id, u.id, $3, $4 FROM apps a, users u WHERE a.id = $1 AND u.id = $2
         ON CONFLICT (app_id, user_id) DO UPDATE SET role = excluded.role
         RETURNING app_id`,
        [appId, userId, role, addedBy],
      );
      return rows.length === 1 ? this.find(appId, userId) : null;
    },
    async find(appId: string, userId: string): Promise<Member | null> {
      const [row] = await db.query<MemberRow>(
        `SELECT m.*, u.username, u.name FROM app_members m JOIN users u ON u.id = m.user_id
         WHERE m.app_id = $1 AND m.user_id = $2`,
        [appId, userId],
      );
      return row ? toMember(row) : null;
    },
    async remove(appId: string, userId: string): Promise<boolean> {
      const sql = 'DELETE FROM app_members WHERE app_id = $1 AND user_id = $2 RETURNING 1';
      return (await db.query(sql, [appId, userId])).length === 1;
    },
    /** The team, owners first, then by username. */
    async listForApp(appId: string): Promise<Member[]> {
      const rows = await db.query<MemberRow>(
        `SELECT m.*, u.username, u.name FROM app_members m JOIN users u ON u.id = m.user_id WHERE m.app_id = $1
         ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'developer' THEN 1 ELSE 2 END, u.username`,
        [appId],
      );
      return rows.map(toMember);
    },
    /** The apps a person belongs to (ids and roles), oldest app first. */
    async appsOf(userId: string): Promise<{ appId: string; role: MemberRole }[]> {
      const rows = await db.query<{ app_id: string; role: MemberRole }>(
        `SELECT m.app_id, m.role FROM app_members m JOIN apps a ON a.id = m.app_id WHERE m.user_id = $1
         ORDER BY a.created_at, a.id`,
        [userId],
      );
      return rows.map((r) => ({ appId: r.app_id, role: r.role }));
    },
    async ownerCount(appId: string): Promise<number> {
      const [row] = await db.query<{ n: string | number }>(
        "SELECT count(*) AS n FROM app_members WHERE app_id = $1 AND role = 'owner'",
        [appId],
      );
      return Number(row.n);
    },
  };
}
export type MemberStore = ReturnType<typeof memberStore>;

/** Sign-in insight of an app, from the audit trail: counts only, never who. */
export function insightStore(db: Queryable) {
  return {
    /** Per UTC day of the last `days` days, the successful sign-ins at the app and its consent withdrawals. */
    async daily(appId: string, days: number): Promise<{ day: string; signIns: number; withdrawals: number }[]> {
      const rows = await db.query<{ day: string; type: string; n: string | number }>(
        `SELECT to_char(date_trunc('day', at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, type, count(*) AS n
         FROM audit_events
         WHERE type IN ('signin.succeeded', 'consent.withdrawn') AND detail->>'app_id' = $1
           AND at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - ($2::int - 1) * interval '1 day'
         GROUP BY 1, 2`,
        [appId, days],
      );
      const out: { day: string; signIns: number; withdrawals: number }[] = [];
      const today = new Date();
      for (let i = days - 1; i >= 0; i--) {
        const day = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i))
          .toISOString()
          .slice(0, 10);
        const count = (type: string) => Number(rows.find((r) => r.day === day && r.type === type)?.n ?? 0);
        out.push({ day, signIns: count('signin.succeeded'), withdrawals: count('consent.withdrawn') });
      }
      return out;
    },
  };
}
export type InsightStore = ReturnType<typeof insightStore>;
