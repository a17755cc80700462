import type { Db, Queryable } from '@attest/common';

/** The algorithm a key signs with: each has its own set of keys, rotated alike. */
export type KeyAlg = 'RS256' | 'PS256' | 'ES256';
/** Every algorithm discovery advertises for our tokens: each has its keys from start. */
export const KEY_ALGS: readonly KeyAlg[] = ['RS256', 'PS256', 'ES256'];

export interface StoredKey {
  kid: string;
  alg: KeyAlg;
  publicJwk: Record<string, string>;
  privateKeyEnc: string;
  createdAt: Date;
  retiredAt: Date | null;
  unpublishAt: Date | null;
  /** When it started signing; null for the next key of its algorithm (published, not signing yet). */
  activatedAt: Date | null;
  /** Time signing (since created, for a next key), by the database clock, so replicas with skewed clocks agree. */
  ageMs: number;
  /** Time published (since created), by the database clock. */
  publishedMs: number;
}

interface KeyRow {
  kid: string;
  alg: KeyAlg;
  public_jwk: Record<string, string>;
  private_key_enc: string;
  created_at: Date;
  retired_at: Date | null;
  unpublish_at: Date | null;
  activated_at: Date | null;
  age_ms: number;
  published_ms: number;
}

const toKey = (r: KeyRow): StoredKey => ({
  kid: r.kid,
  alg: r.alg,
  publicJwk: r.public_jwk,
  privateKeyEnc: r.private_key_enc,
  createdAt: r.created_at,
  retiredAt: r.retired_at,
  unpublishAt: r.unpublish_at,
  activatedAt: r.activated_at,
  ageMs: Number(r.age_ms),
  publishedMs: Number(r.published_ms),
});

const COLUMNS =
  '*, (extract(epoch FROM now() - coalesce(activated_at, created_at)) * 1000)::float8 AS age_ms, ' +
  '(extract(epoch FROM now() - created_at) * 1000)::float8 AS published_ms';

export function keyStore(db: Db) {
  return {
    /** Keys still published: the active and next ones, and retired ones whose tokens may not have expired. */
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
    /** The active key of an algorithm (RS256 unless asked): the one signing now. */
    async active(tx: Queryable, alg: KeyAlg = 'RS256'): Promise<StoredKey | null> {
      const [row] = await tx.query<KeyRow>(
        `SELECT ${COLUMNS} FROM signing_keys WHERE retired_at IS NULL AND activated_at IS NOT NULL AND alg = $1
         ORDER BY activated_at DESC LIMIT 1`,
        [alg],
      );
      return row ? toKey(row) : null;
    },
    /** The next key of an algorithm: published, signing once the active one is due and it was published long enough. */
    async next(tx: Queryable, alg: KeyAlg): Promise<StoredKey | null> {
      const [row] = await tx.query<KeyRow>(
        `SELECT ${COLUMNS} FROM signing_keys WHERE retired_at IS NULL AND activated_at IS NULL AND alg = $1
           AND (unpublish_at IS NULL OR unpublish_at > now())
         ORDER BY created_at ASC LIMIT 1`,
        [alg],
      );
      return row ? toKey(row) : null;
    },
    /** A new key: signing at once (`active`), or the next one of its algorithm, published ahead of its use. */
    async insert(
      tx: Queryable,
      key: { kid: string; alg?: KeyAlg; publicJwk: Record<string, string>; privateKeyEnc: string },
      active: boolean,
    ): Promise<void> {
      await tx.query(
        `INSERT INTO signing_keys (kid, alg, public_jwk, private_key_enc, activated_at)
         VALUES ($1, $2, $3, $4, CASE WHEN $5::boolean THEN now() END)`,
        [key.kid, key.alg ?? 'RS256', key.publicJwk, key.privateKeyEnc, active],
      );
    },
    /** The next key starts signing. */
    async activate(tx: Queryable, kid: string): Promise<void> {
      await tx.query('UPDATE signing_keys SET activated_at = now() WHERE kid = $1', [kid]);
    },
    /** Takes every published key but those in `keep` out of the JWKS now (an emergency rotation); returns their kids. */
    async revokeAllBut(tx: Queryable, keep: string | string[]): Promise<string[]> {
      const rows = await tx.query<{ kid: string }>(
        `UPDATE signing_keys SET retired_at = coalesce(retired_at, now()), unpublish_at = now()
         WHERE kid <> ALL ($1::text[]) AND (unpublish_at IS NULL OR unpublish_at > now()) RETURNING kid`,
        [Array.isArray(keep) ? keep : [keep]],
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
