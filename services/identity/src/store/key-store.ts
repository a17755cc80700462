import type { Db, Queryable } from '@attest/common';

export interface StoredKey {
  kid: string;
  publicJwk: Record<string, string>;
  privateKeyEnc: string;
  createdAt: Date;
  retiredAt: Date | null;
  unpublishAt: Date | null;
  /** Age by the database clock, so replicas with skewed clocks agree. */
  ageMs: number;
}

interface KeyRow {
  kid: string;
  public_jwk: Record<string, string>;
  private_key_enc: string;
  created_at: Date;
  retired_at: Date | null;
  unpublish_at: Date | null;
  age_ms: number;
}

const toKey = (r: KeyRow): StoredKey => ({
  kid: r.kid,
  publicJwk: r.public_jwk,
  privateKeyEnc: r.private_key_enc,
  createdAt: r.created_at,
  retiredAt: r.retired_at,
  unpublishAt: r.unpublish_at,
  ageMs: Number(r.age_ms),
});

const COLUMNS = '*, (extract(epoch FROM now() - created_at) * 1000)::float8 AS age_ms';

export function keyStore(db: Db) {
  return {
    /** Keys still published: the active one and retired ones whose tokens may not have expired. */
    async published(): Promise<StoredKey[]> {
      const rows = await db.query<KeyRow>(
        `SELECT ${COLUMNS} FROM signing_keys WHERE unpublish_at IS NULL OR unpublish_at > now() ORDER BY created_at DESC`,
      );
      return rows.map(toKey);
    },
    /**
     * Keys taken out of the JWKS while tokens they signed may still be unexpired (revoked by an
     * emergency rotation; a key retired the ordinary way stays published until its tokens expire).
     */
    async revoked(maxTokenTtlMs: number): Promise<string[]> {
      const rows = await db.query<{ kid: string }>(
        `SELECT kid FROM signing_keys
         WHERE unpublish_at <= now() AND unpublish_at > now() - $1 * interval '1 millisecond'`,
        [maxTokenTtlMs],
      );
      return rows.map((r) => r.kid);
    },
    /**
     * Runs fn under a transaction-scoped advisory lock, so of many replicas exactly one rotates
     * and the others then read the key it made.
     */
    async withRotationLock<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return db.transaction(async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock(hashtext('attest:identity:key-rotation'))");
        return fn(tx);
      });
    },
    async active(tx: Queryable): Promise<StoredKey | null> {
      const [row] = await tx.query<KeyRow>(
        `SELECT ${COLUMNS} FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1`,
      );
      return row ? toKey(row) : null;
    },
    async insert(
      tx: Queryable,
      key: { kid: string; publicJwk: Record<string, string>; privateKeyEnc: string },
    ): Promise<void> {
      await tx.query('INSERT INTO signing_keys (kid, public_jwk, private_key_enc) VALUES ($1, $2, $3)', [
        key.kid,
        key.publicJwk,
        key.privateKeyEnc,
      ]);
    },
    /** Takes every published key but `keep` out of the JWKS now (an emergency rotation); returns their kids. */
    async revokeAllBut(tx: Queryable, keep: string): Promise<string[]> {
      const rows = await tx.query<{ kid: string }>(
        `UPDATE signing_keys SET retired_at = coalesce(retired_at, now()), unpublish_at = now()
         WHERE kid <> $1 AND (unpublish_at IS NULL OR unpublish_at > now()) RETURNING kid`,
        [keep],
      );
      return rows.map((r) => r.kid).sort();
    },
    async retire(tx: Queryable, kid: string, publishedForMs: number): Promise<void> {
      await tx.query(
        "UPDATE signing_keys SET retired_at = now(), unpublish_at = now() + $2 * interval '1 millisecond' WHERE kid = $1",
        [kid, publishedForMs],
      );
    },
  };
}
export type KeyStore = ReturnType<typeof keyStore>;
