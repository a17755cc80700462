import type { Queryable } from '@attest/common';

/** What a refresh token family grants, as the code exchange granted it (never widened). */
export interface RefreshGrant {
  sub: string;
  /** The OpenID Connect scopes (openid, profile, email). */
  scopes: string[];
  /** RFC 8707: the resource its access tokens are for, the scopes granted for it, and its resource_id. */
  resource?: { uri: string; scopes: string[]; id?: string };
  acr: string;
  amr?: string[];
  authTime: number;
  /** When the family began (seconds): a consent withdrawn after it ends it. */
  familyIat: number;
}

export interface RefreshRecord {
  tokenHash: string;
  familyId: string;
  clientId: string;
  userId: string;
  grant: RefreshGrant;
  sid: string | null;
  jkt: string | null;
  accessJti: string;
  expiresAt: Date;
  usedAt: Date | null;
}

interface RefreshRow {
  token_hash: string;
  family_id: string;
  client_id: string;
  user_id: string;
  grant_data: RefreshGrant | string;
  sid: string | null;
  jkt: string | null;
  access_jti: string;
  expires_at: Date;
  used_at: Date | null;
}

const toRecord = (r: RefreshRow): RefreshRecord => ({
  tokenHash: r.token_hash,
  familyId: r.family_id,
  clientId: r.client_id,
  userId: r.user_id,
  grant: typeof r.grant_data === 'string' ? (JSON.parse(r.grant_data) as RefreshGrant) : r.grant_data,
  sid: r.sid,
  jkt: r.jkt,
  accessJti: r.access_jti,
  expiresAt: r.expires_at,
  usedAt: r.used_at,
});

/** refresh_tokens (018_refresh_tokens.sql). */
export function refreshStore(db: Queryable) {
  return {
    async insert(r: Omit<RefreshRecord, 'usedAt'>): Promise<void> {
      await db.query(
        `INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, grant_data, sid, jkt, access_jti, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          r.tokenHash,
          r.familyId,
          r.clientId,
          r.userId,
          JSON.stringify(r.grant),
          r.sid,
          r.jkt,
          r.accessJti,
          r.expiresAt,
        ],
      );
    },
    async find(tokenHash: string): Promise<RefreshRecord | null> {
      const [row] = await db.query<RefreshRow>('SELECT * FROM refresh_tokens WHERE token_hash = $1', [tokenHash]);
      return row ? toRecord(row) : null;
    },
    /**
     * Marks the token used and stores its successor, in one statement (one commit): the successor only when
     * the token was not used already; false then (a request that won the race, a thief, or a family ended).
     */
    async rotate(usedHash: string, next: Omit<RefreshRecord, 'usedAt'>): Promise<boolean> {
      const rows = await db.query(
        `WITH used AS (
           UPDATE refresh_tokens SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL RETURNING 1
         )
         INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, grant_data, sid, jkt, access_jti, expires_at)
         SELECT $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM used
         RETURNING 1`,
        [
          usedHash,
          next.tokenHash,
          next.familyId,
          next.clientId,
          next.userId,
          JSON.stringify(next.grant),
          next.sid,
          next.jkt,
          next.accessJti,
          next.expiresAt,
        ],
      );
      return rows.length === 1;
    },
    /** Ends a family: its rows go; the access tokens they gave, for the caller to revoke. */
    async endFamily(familyId: string): Promise<string[]> {
      const rows = await db.query<{ access_jti: string }>(
        'DELETE FROM refresh_tokens WHERE family_id = $1 RETURNING access_jti',
        [familyId],
      );
      return rows.map((r) => r.access_jti);
    },
    /** The families of ended sessions (their app-specific sids) end. */
    async endForSids(sids: string[]): Promise<number> {
      if (sids.length === 0) return 0;
      return (await db.query('DELETE FROM refresh_tokens WHERE sid = ANY($1) RETURNING 1', [sids])).length;
    },
    /** A withdrawn consent: the person's families for the app end. */
    async endFor(userId: string, clientId: string): Promise<number> {
      const sql = 'DELETE FROM refresh_tokens WHERE user_id = $1 AND client_id = $2 RETURNING 1';
      return (await db.query(sql, [userId, clientId])).length;
    },
    async prune(): Promise<number> {
      return (await db.query('DELETE FROM refresh_tokens WHERE expires_at <= now() RETURNING 1')).length;
    },
  };
}
export type RefreshStore = ReturnType<typeof refreshStore>;
