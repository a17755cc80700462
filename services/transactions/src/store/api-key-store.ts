import type { Queryable } from '@attest/common';

export interface ApiKeyRecord {
  id: string;
  appId: string;
  secretHash: string;
  name: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

interface Row {
  id: string;
  app_id: string;
  secret_hash: string;
  name: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  appId: r.app_id,
  secretHash: r.secret_hash,
  name: r.name,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

export function apiKeyStore(db: Queryable) {
  return {
    async insert(key: { id: string; appId: string; secretHash: string; name: string | null }): Promise<ApiKeyRecord> {
      const [row] = await db.query<Row>(
        'INSERT INTO api_keys (id, app_id, secret_hash, name) VALUES ($1, $2, $3, $4) RETURNING *',
        [key.id, key.appId, key.secretHash, key.name],
      );
      return toRecord(row);
    },
    async find(id: string): Promise<ApiKeyRecord | null> {
      const [row] = await db.query<Row>('SELECT * FROM api_keys WHERE id = $1', [id]);
      return row ? toRecord(row) : null;
    },
    async listForApp(appId: string): Promise<ApiKeyRecord[]> {
      return (await db.query<Row>('SELECT * FROM api_keys WHERE app_id = $1 ORDER BY created_at, id', [appId])).map(
        toRecord,
      );
    },
    async revoke(id: string): Promise<ApiKeyRecord | null> {
      const [row] = await db.query<Row>(
        'UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING *',
        [id],
      );
      return row ? toRecord(row) : null;
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
