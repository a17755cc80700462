import type { Queryable } from '@attest/common';

export interface UsedCode {
  jtis: string[];
  expiresAt: Date;
}

/**
 * Revoked access tokens and exchanged codes, kept until the tokens they concern have expired. A
 * revoked "jti" may also name every token of an ended session (`sid:` and the token's sid claim).
 */
export function revocationStore(db: Queryable) {
  return {
    async revoke(jtis: string[], expiresAt: Date): Promise<void> {
      if (jtis.length === 0) return;
      await db.query(
        'INSERT INTO revoked_tokens (jti, expires_at) SELECT unnest($1::text[]), $2 ON CONFLICT (jti) DO NOTHING',
        [jtis, expiresAt],
      );
    },
    /** Tokens of `key` issued before `before` are revoked (a later call only moves both times on). */
    async revokeBefore(key: string, before: Date, expiresAt: Date): Promise<void> {
      await db.query(
        `INSERT INTO revoked_before (key, before, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET before = greatest(revoked_before.before, EXCLUDED.before),
           expires_at = greatest(revoked_before.expires_at, EXCLUDED.expires_at)`,
        [key, before, expiresAt],
      );
    },
    async liveBefore(): Promise<{ key: string; before: Date; expiresAt: Date }[]> {
      const rows = await db.query<{ key: string; before: Date; expires_at: Date }>(
        'SELECT key, before, expires_at FROM revoked_before WHERE expires_at > now()',
      );
      return rows.map((r) => ({ key: r.key, before: r.before, expiresAt: r.expires_at }));
    },
    /** Every revocation still in force: the in-process set is loaded from this. */
    async live(): Promise<{ jti: string; expiresAt: Date }[]> {
      const rows = await db.query<{ jti: string; expires_at: Date }>(
        'SELECT jti, expires_at FROM revoked_tokens WHERE expires_at > now()',
      );
      return rows.map((r) => ({ jti: r.jti, expiresAt: r.expires_at }));
    },
    /**
     * Records exchanged codes, many in one statement (and so one commit). A code already recorded is
     * left as it was (it cannot be: codes are taken once).
     */
    async recordUsedCodes(codes: { codeHash: string; used: UsedCode }[]): Promise<void> {
      if (codes.length === 0) return;
      await db.query(
        `INSERT INTO used_codes (code_hash, jtis, expires_at)
         SELECT c, ARRAY(SELECT jsonb_array_elements_text(j)), e FROM unnest($1::text[], $2::jsonb[], $3::timestamptz[]) AS t(c, j, e)
         ON CONFLICT DO NOTHING`,
        [
          codes.map((c) => c.codeHash),
          codes.map((c) => JSON.stringify(c.used.jtis)),
          codes.map((c) => c.used.expiresAt),
        ],
      );
    },
    async usedCode(codeHash: string): Promise<UsedCode | null> {
      const [row] = await db.query<{ jtis: string[]; expires_at: Date }>(
        'SELECT jtis, expires_at FROM used_codes WHERE code_hash = $1 AND expires_at > now()',
        [codeHash],
      );
      return row ? { jtis: row.jtis, expiresAt: row.expires_at } : null;
    },
    /** Drops what has expired; returns how many rows went. */
    async prune(): Promise<number> {
      const [row] = await db.query<{ n: number }>(
        `WITH a AS (DELETE FROM revoked_tokens WHERE expires_at <= now() RETURNING 1),
              b AS (DELETE FROM used_codes WHERE expires_at <= now() RETURNING 1),
              c AS (DELETE FROM revoked_before WHERE expires_at <= now() RETURNING 1)
         SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b) + (SELECT count(*) FROM c) AS n`,
      );
      return Number(row.n);
    },
  };
}
export type RevocationStore = ReturnType<typeof revocationStore>;
