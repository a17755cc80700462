import type { Queryable } from '@attest/common';

export type VerificationLevel = 'orb' | 'device';

export interface User {
  id: string;
  username: string;
  /** Null for an account made by passkey sign-up. */
  passwordHash: string | null;
  verificationLevel: VerificationLevel;
  name: string | null;
  givenName: string | null;
  familyName: string | null;
  disabledAt: Date | null;
  createdAt: Date;
}

/** The fields an administrator may change; absent ones stay as they are. */
export type UserUpdate = Partial<Pick<User, 'verificationLevel' | 'name' | 'givenName' | 'familyName'>>;

interface UserRow {
  id: string;
  username: string;
  password_hash: string | null;
  verification_level: VerificationLevel;
  name: string | null;
  given_name: string | null;
  family_name: string | null;
  disabled_at: Date | null;
  created_at: Date;
}

const toUser = (r: UserRow): User => ({
  id: r.id,
  username: r.username,
  passwordHash: r.password_hash,
  verificationLevel: r.verification_level,
  name: r.name,
  givenName: r.given_name,
  familyName: r.family_name,
  disabledAt: r.disabled_at ?? null,
  createdAt: r.created_at,
});

export type NewUser = Omit<User, 'disabledAt' | 'createdAt'>;

/** What a deleted user took with them: the cache keys of their consents and pairwise subjects. */
export interface RemovedUser {
  consentAppIds: string[];
  subjects: { appId: string; sub: string }[];
}

export function userStore(db: Queryable) {
  return {
    /** Null when the username is taken. */
    async insert(user: NewUser): Promise<User | null> {
      const [row] = await db.query<UserRow>(
        `INSERT INTO users (id, username, password_hash, verification_level, name, given_name, family_name)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (username) DO NOTHING RETURNING *`,
        [user.id, user.username, user.passwordHash, user.verificationLevel, user.name, user.givenName, user.familyName],
      );
      return row ? toUser(row) : null;
    },
    async findById(id: string): Promise<User | null> {
      const [row] = await db.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
      return row ? toUser(row) : null;
    },
    async update(id: string, changes: UserUpdate): Promise<User | null> {
      const [row] = await db.query<UserRow>(
        `UPDATE users SET verification_level = coalesce($2, verification_level),
           name = CASE WHEN $3 THEN $4 ELSE name END,
           given_name = CASE WHEN $5 THEN $6 ELSE given_name END,
           family_name = CASE WHEN $7 THEN $8 ELSE family_name END
         WHERE id = $1 RETURNING *`,
        [
          id,
          changes.verificationLevel ?? null,
          'name' in changes,
          changes.name ?? null,
          'givenName' in changes,
          changes.givenName ?? null,
          'familyName' in changes,
          changes.familyName ?? null,
        ],
      );
      return row ? toUser(row) : null;
    },
    async setPasswordHash(id: string, passwordHash: string): Promise<boolean> {
      const rows = await db.query('UPDATE users SET password_hash = $2 WHERE id = $1 RETURNING 1', [id, passwordHash]);
      return rows.length === 1;
    },
    async replacePasswordHash(id: string, previous: string, passwordHash: string): Promise<boolean> {
      const rows = await db.query(
        'UPDATE users SET password_hash = $3 WHERE id = $1 AND password_hash = $2 RETURNING 1',
        [id, previous, passwordHash],
      );
      return rows.length === 1;
    },
    async findByUsername(username: string): Promise<User | null> {
      const [row] = await db.query<UserRow>('SELECT * FROM users WHERE username = $1', [username]);
      return row ? toUser(row) : null;
    },
    /** By username, after `after`; `prefix` keeps the usernames that start with it. */
    async list(q: { prefix?: string; after?: string; limit: number }): Promise<User[]> {
      const rows = await db.query<UserRow>(
        `SELECT * FROM users WHERE ($1::text IS NULL OR username LIKE $1 || '%') AND ($2::text IS NULL OR username > $2)
         ORDER BY username LIMIT $3`,
        [q.prefix?.replace(/[\\%_]/g, (c) => `\\${c}`) ?? null, q.after ?? null, q.limit],
      );
      return rows.map(toUser);
    },
    async setDisabled(id: string, disabled: boolean): Promise<User | null> {
      const [row] = await db.query<UserRow>(
        'UPDATE users SET disabled_at = CASE WHEN $2 THEN coalesce(disabled_at, now()) ELSE NULL END WHERE id = $1 RETURNING *',
        [id, disabled],
      );
      return row ? toUser(row) : null;
    },
    /** Deletes the user with their consents and subjects (in one statement); null when there was none. */
    async remove(id: string): Promise<RemovedUser | null> {
      const [row] = await db.query<{ found: boolean; consents: string[]; subjects: { app_id: string; sub: string }[] }>(
        `WITH c AS (DELETE FROM consents WHERE user_id = $1 RETURNING app_id),
              s AS (DELETE FROM subjects WHERE user_id = $1 RETURNING app_id, sub),
              u AS (DELETE FROM users WHERE id = $1 RETURNING 1)
         SELECT EXISTS (SELECT 1 FROM u) AS found,
                coalesce((SELECT array_agg(app_id) FROM c), '{}') AS consents,
                coalesce((SELECT json_agg(json_build_object('app_id', app_id, 'sub', sub)) FROM s), '[]') AS subjects`,
        [id],
      );
      if (!row.found) return null;
      return { consentAppIds: row.consents, subjects: row.subjects.map((x) => ({ appId: x.app_id, sub: x.sub })) };
    },
  };
}
export type UserStore = ReturnType<typeof userStore>;
