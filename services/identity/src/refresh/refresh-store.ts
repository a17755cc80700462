import { preparedStatement, type Queryable } from '@attest/common';

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

/** One rotation: the token presented (its hash), its successor's hash and the access token id it gave. */
export interface Rotation {
  usedHash: string;
  nextHash: string;
  accessJti: string;
}

// A family's row (refresh_families) holds what all its tokens share; a token's row (refresh_tokens) is its hash,
// its family, the access token it gave and whether it was used (029_refresh_families.sql).
const FAMILY_COLUMNS = 'f.client_id, f.user_id, f.grant_data, f.sid, f.jkt, f.expires_at';

// One token (the usual case when requests do not overlap): its row by primary key, marked used while unused
// and while its family is there (an update that stays on its page: used_at is in no index), and the
// successor's narrow row in its family. (A successor stored while its family was being ended, which the end
// did not see, is left without a family: it is never used, as no rotation or lookup finds its family.)
const ROTATE_ONE = `WITH used AS (
    UPDATE refresh_tokens r SET used_at = now() FROM refresh_families f
    WHERE r.token_hash = $1 AND r.used_at IS NULL AND f.family_id = r.family_id
    RETURNING r.family_id
  )
  INSERT INTO refresh_tokens (token_hash, family_id, access_jti)
  SELECT $2, family_id, $3 FROM used
  RETURNING token_hash`;

// Several tokens: the same, for each element of the arrays (a nested loop of primary-key lookups; the
// planner keeps it with 100,000 rows in the table, measured in PGlite).
const ROTATE_MANY = `WITH used AS (
    UPDATE refresh_tokens r SET used_at = now()
    FROM unnest($1::text[], $2::text[], $3::text[]) AS a(used_hash, next_hash, access_jti), refresh_families f
    WHERE r.token_hash = a.used_hash AND r.used_at IS NULL AND f.family_id = r.family_id
    RETURNING a.next_hash, a.access_jti, r.family_id
  )
  INSERT INTO refresh_tokens (token_hash, family_id, access_jti)
  SELECT next_hash, family_id, access_jti FROM used
  RETURNING token_hash`;

// Families ended (by the CTE `ended`, which answers family_id) and all their tokens, in one statement: the
// access tokens they gave, for the caller to revoke.
const endFamilies = (ended: string) =>
  `WITH ended AS (${ended})
   DELETE FROM refresh_tokens WHERE family_id IN (SELECT family_id FROM ended) RETURNING access_jti`;

/** refresh_families and refresh_tokens (018_refresh_tokens.sql, 029_refresh_families.sql). */
export function refreshStore(db: Queryable) {
  return {
    /** A new family and its first token, in one statement. */
    async insert(r: Omit<RefreshRecord, 'usedAt'>): Promise<void> {
      await db.query(
        `WITH family AS (
           INSERT INTO refresh_families (family_id, client_id, user_id, grant_data, sid, jkt, expires_at)
           VALUES ($2, $3, $4, $5, $6, $7, $9) RETURNING family_id
         )
         INSERT INTO refresh_tokens (token_hash, family_id, access_jti) SELECT $1, family_id, $8 FROM family`,
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
      // a token whose family is gone (ended while its successor was being stored) is no token
      const [row] = await db.query<RefreshRow>(
        `SELECT t.token_hash, t.family_id, t.access_jti, t.used_at, ${FAMILY_COLUMNS}
         FROM refresh_tokens t JOIN refresh_families f ON f.family_id = t.family_id WHERE t.token_hash = $1`,
        [tokenHash],
      );
      return row ? toRecord(row) : null;
    },
    /**
     * Marks each used token used and stores its successor, in one statement (one commit): a successor only
     * when its token was unused (not used already, nor ended). The successor is a token of the used one's
     * family (which holds the app, person, grant, sid, DPoP key, absolute expiry) with its own hash and access
     * token id. Answers the
     * hashes of the successors stored; a token that was used already (a request that won the race, a thief,
     * or a family ended) has none. Each usedHash appears once (the caller's batcher sees to it).
     */
    async rotateMany(rotations: Rotation[]): Promise<Set<string>> {
      if (rotations.length === 0) return new Set();
      // rows are locked in the order of the arrays (a nested loop over them): in one order everywhere, so two
      // replicas' statements that share tokens (the same tokens replayed at both) wait for each other, never deadlock
      const sorted = [...rotations].sort((a, b) => (a.usedHash < b.usedHash ? -1 : a.usedHash > b.usedHash ? 1 : 0));
      const rows =
        rotations.length === 1
          ? await db.query<{ token_hash: string }>(preparedStatement(ROTATE_ONE), [
              rotations[0].usedHash,
              rotations[0].nextHash,
              rotations[0].accessJti,
            ])
          : await db.query<{ token_hash: string }>(preparedStatement(ROTATE_MANY), [
              sorted.map((r) => r.usedHash),
              sorted.map((r) => r.nextHash),
              sorted.map((r) => r.accessJti),
            ]);
      return new Set(rows.map((r) => r.token_hash));
    },
    /** Ends a family: its rows go; the access tokens they gave, for the caller to revoke. */
    async endFamily(familyId: string): Promise<string[]> {
      const rows = await db.query<{ access_jti: string }>(
        endFamilies('DELETE FROM refresh_families WHERE family_id = $1 RETURNING family_id'),
        [familyId],
      );
      return rows.map((r) => r.access_jti);
    },
    /** The families of ended sessions (their app-specific sids) end. */
    async endForSids(sids: string[]): Promise<number> {
      if (sids.length === 0) return 0;
      const sql = endFamilies('DELETE FROM refresh_families WHERE sid = ANY($1) RETURNING family_id');
      return (await db.query(sql, [sids])).length;
    },
    /** A withdrawn consent: the person's families for the app end. */
    async endFor(userId: string, clientId: string): Promise<number> {
      const sql = endFamilies('DELETE FROM refresh_families WHERE user_id = $1 AND client_id = $2 RETURNING family_id');
      return (await db.query(sql, [userId, clientId])).length;
    },
    /** Families past their absolute lifetime, and their tokens. */
    async prune(): Promise<number> {
      const sql = endFamilies('DELETE FROM refresh_families WHERE expires_at <= now() RETURNING family_id');
      return (await db.query(sql)).length;
    },
  };
}
export type RefreshStore = ReturnType<typeof refreshStore>;
