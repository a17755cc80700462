import type { Queryable } from '@attest/common';

export function subjectStore(db: Queryable) {
  return {
    /** True when the row is new. */
    async remember(appId: string, sub: string, userId: string): Promise<boolean> {
      const rows = await db.query(
        'INSERT INTO subjects (app_id, sub, user_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1',
        [appId, sub, userId],
      );
      return rows.length === 1;
    },
    async userIdFor(appId: string, sub: string): Promise<string | null> {
      const [row] = await db.query<{ user_id: string }>('SELECT user_id FROM subjects WHERE app_id = $1 AND sub = $2', [
        appId,
        sub,
      ]);
      return row?.user_id ?? null;
    },
  };
}
export type SubjectStore = ReturnType<typeof subjectStore>;
