import type { Queryable } from '@attest/common';

export function consentStore(db: Queryable) {
  return {
    async find(userId: string, appId: string): Promise<string[]> {
      const [row] = await db.query<{ scopes: string[] }>(
        'SELECT scopes FROM consents WHERE user_id = $1 AND app_id = $2',
        [userId, appId],
      );
      return row?.scopes ?? [];
    },
    /** Every app the user approved, with the app's name, newest first. */
    async listForUser(
      userId: string,
    ): Promise<{ appId: string; appName: string; scopes: string[]; grantedAt: Date }[]> {
      const rows = await db.query<{ app_id: string; name: string; scopes: string[]; granted_at: Date }>(
        `SELECT c.app_id, a.name, c.scopes, c.granted_at FROM consents c JOIN apps a ON a.id = c.app_id
         WHERE c.user_id = $1 ORDER BY c.granted_at DESC, c.app_id`,
        [userId],
      );
      return rows.map((r) => ({ appId: r.app_id, appName: r.name, scopes: r.scopes, grantedAt: r.granted_at }));
    },
    /** Adds to what was granted before. */
    async grant(userId: string, appId: string, scopes: string[]): Promise<void> {
      await db.query(
        `INSERT INTO consents (user_id, app_id, scopes) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, app_id) DO UPDATE
           SET scopes = ARRAY(SELECT DISTINCT unnest(consents.scopes || EXCLUDED.scopes) ORDER BY 1), granted_at = now()`,
        [userId, appId, scopes],
      );
    },
    /**
     * Removes a resource's entries (`<uri>`, `<uri>#<scope>`) from every consent: the resource was deleted.
     * Returns the consents changed. A scan of consents, for an operator's rare deletion.
     */
    async removeResource(uri: string): Promise<{ userId: string; appId: string }[]> {
      const rows = await db.query<{ user_id: string; app_id: string }>(
        `UPDATE consents
           SET scopes = ARRAY(SELECT s FROM unnest(scopes) s WHERE s <> $1 AND left(s, length($1) + 1) <> $1 || '#' ORDER BY 1)
         WHERE EXISTS (SELECT 1 FROM unnest(scopes) s WHERE s = $1 OR left(s, length($1) + 1) = $1 || '#')
         RETURNING user_id, app_id`,
        [uri],
      );
      return rows.map((r) => ({ userId: r.user_id, appId: r.app_id }));
    },
    async withdraw(userId: string, appId: string): Promise<boolean> {
      const rows = await db.query('DELETE FROM consents WHERE user_id = $1 AND app_id = $2 RETURNING 1', [
        userId,
        appId,
      ]);
      return rows.length === 1;
    },
  };
}
export type ConsentStore = ReturnType<typeof consentStore>;
