import type { Queryable } from '@attest/common';

export interface ApiKeyRecord {
  id: string;
  appId: string;
  secretHash: string;
  name: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** When the operator disabled the key's app (its keys then get 401), else null. */
  appDisabledAt: Date | null;
}

interface Row {
  id: string;
  app_id: string;
  secret_hash: string;
  name: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  app_disabled_at: Date | null;
}

const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  appId: r.app_id,
  secretHash: r.secret_hash,
  name: r.name,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
  appDisabledAt: r.app_disabled_at,
});

/** The key's columns and whether its app is disabled, read in the same statement. */
const KEY_COLUMNS = 'k.*, (SELECT d.disabled_at FROM disabled_apps d WHERE d.app_id = k.app_id) AS app_disabled_at';
const RETURNING =
  'RETURNING *, (SELECT d.disabled_at FROM disabled_apps d WHERE d.app_id = api_keys.app_id) AS app_disabled_at';

export function apiKeyStore(db: Queryable) {
  return {
    async insert(key: { id: string; appId: string; secretHash: string; name: string | null }): Promise<ApiKeyRecord> {
      const [row] = await db.query<Row>(
        `INSERT INTO api_keys (id, app_id, secret_hash, name) VALUES ($1, $2, $3, $4) ${RETURNING}`,
        [key.id, key.appId, key.secretHash, key.name],
      );
      return toRecord(row);
    },
    async find(id: string): Promise<ApiKeyRecord | null> {
      const [row] = await db.query<Row>(`SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.id = $1`, [id]);
      return row ? toRecord(row) : null;
    },
    async listForApp(appId: string): Promise<ApiKeyRecord[]> {
      return (
        await db.query<Row>(`SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.app_id = $1 ORDER BY k.created_at, k.id`, [
          appId,
        ])
      ).map(toRecord);
    },
    async revoke(id: string): Promise<ApiKeyRecord | null> {
      const [row] = await db.query<Row>(
        `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 ${RETURNING}`,
        [id],
      );
      return row ? toRecord(row) : null;
    },
    /**
     * Disables or enables an app (idempotent): when disabled since, or null. Returns the ids of its keys,
     * whose cached rows must be dropped.
     */
    async setAppDisabled(appId: string, disabled: boolean): Promise<{ disabledAt: Date | null; keyIds: string[] }> {
      let disabledAt: Date | null = null;
      if (disabled) {
        const [row] = await db.query<{ disabled_at: Date }>(
          `INSERT INTO disabled_apps (app_id) VALUES ($1)
           ON CONFLICT (app_id) DO UPDATE SET disabled_at = disabled_apps.disabled_at RETURNING disabled_at`,
          [appId],
        );
        disabledAt = row.disabled_at;
      } else await db.query('DELETE FROM disabled_apps WHERE app_id = $1', [appId]);
      const keys = await db.query<{ id: string }>('SELECT id FROM api_keys WHERE app_id = $1', [appId]);
      return { disabledAt, keyIds: keys.map((k) => k.id) };
    },
    /** When the operator disabled the app, or null. */
    async appDisabledAt(appId: string): Promise<Date | null> {
      const [row] = await db.query<{ disabled_at: Date }>('SELECT disabled_at FROM disabled_apps WHERE app_id = $1', [
        appId,
      ]);
      return row?.disabled_at ?? null;
    },
    /** At most one write a minute per key. */
    async touch(id: string): Promise<void> {
      await db.query(
        "UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
        [id],
      );
    },
  };
}
export type ApiKeyStore = ReturnType<typeof apiKeyStore>;
