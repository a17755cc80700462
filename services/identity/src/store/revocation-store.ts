import type { Queryable } from '@attest/common';

export interface UsedCode {
  jtis: string[];
  expiresAt: Date;
}

/** Revoked access tokens and exchanged codes, kept until the tokens they concern have expired. */
export function revocationStore(db: Queryable) {
  return {
    async revoke(jtis: string[], expiresAt: Date): Promise<void> {
      if (jtis.length === 0) return;
      await db.query(
        'INSERT INTO revoked_tokens (jti, expires_at) SELECT unnest($1::text[]), $2 ON CONFLICT (jti) DO NOTHING',
        [jtis, expiresAt],
      );
    },
    /** Every revocation still in force: the in-process set is loaded from this. */
    async live(): Promise<{ jti: string; expiresAt: Date }[]> {
      const rows = await db.query<{ jti: string; expires_at: Date }>(
        'SELECT jti, expires_at FROM revoked_tokens WHERE expires_at > now()',
      );
      return rows.map((r) => ({ jti: r.jti, expiresAt: r.expires_at }));
    },
    /** False when the code was already recorded (it cannot be: codes are taken once). */
    async recordUsedCode(codeHash: string, used: UsedCode): Promise<boolean> {
      const rows = await db.query(
        'INSERT INTO used_codes (code_hash, jtis, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1',
        [codeHash, used.jtis, used.expiresAt],
      );
      return rows.length === 1;
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
              b AS (DELETE FROM used_codes WHERE expires_at <= now() RETURNING 1)
         SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b) AS n`,
      );
      return Number(row.n);
    },
  };
}
export type RevocationStore = ReturnType<typeof revocationStore>;
