import type { Db, Queryable } from '@attest/common';

export interface Passkey {
  /** Credential id, base64url. */
  id: string;
  userId: string;
  publicKey: Uint8Array<ArrayBuffer>;
  counter: number;
  transports: string[];
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

interface PasskeyRow {
  id: string;
  user_id: string;
  public_key: Buffer;
  counter: string;
  transports: string[];
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

const toPasskey = (r: PasskeyRow): Passkey => ({
  id: r.id,
  userId: r.user_id,
  publicKey: new Uint8Array(r.public_key),
  counter: Number(r.counter),
  transports: r.transports,
  name: r.name,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

export function passkeyStore(db: Queryable) {
  return {
    /** False when the credential id is already registered. */
    async insert(
      p: Pick<Passkey, 'id' | 'userId' | 'publicKey' | 'counter' | 'transports' | 'name'>,
    ): Promise<boolean> {
      const rows = await db.query(
        `INSERT INTO passkeys (id, user_id, public_key, counter, transports, name) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO NOTHING RETURNING 1`,
        [p.id, p.userId, Buffer.from(p.publicKey), p.counter, p.transports, p.name],
      );
      return rows.length === 1;
    },
    async find(id: string): Promise<Passkey | null> {
      const [row] = await db.query<PasskeyRow>('SELECT * FROM passkeys WHERE id = $1', [id]);
      return row ? toPasskey(row) : null;
    },
    async listForUser(userId: string): Promise<Passkey[]> {
      const rows = await db.query<PasskeyRow>('SELECT * FROM passkeys WHERE user_id = $1 ORDER BY created_at, id', [
        userId,
      ]);
      return rows.map(toPasskey);
    },
    async recordUse(id: string, counter: number): Promise<void> {
      await db.query('UPDATE passkeys SET counter = $2, last_used_at = now() WHERE id = $1', [id, counter]);
    },
  };
}
export type PasskeyStore = ReturnType<typeof passkeyStore>;

/**
 * Removes a passkey unless it is the account's last credential (no password, no other passkey), decided
 * inside the write: the user's row is locked first, so two removals of the same account run one after
 * the other and the second sees what the first left (never an account with nothing to sign in with).
 */
export async function removePasskeyKeepingOne(
  db: Pick<Db, 'transaction'>,
  userId: string,
  id: string,
): Promise<'removed' | 'not_found' | 'last_credential'> {
  return db.transaction(async (tx) => {
    const [user] = await tx.query<{ has_password: boolean }>(
      'SELECT password_hash IS NOT NULL AS has_password FROM users WHERE id = $1 FOR UPDATE',
      [userId],
    );
    if (!user) return 'not_found';
    const rows = await tx.query<{ id: string }>(
      `DELETE FROM passkeys WHERE user_id = $1 AND id = $2
         AND ($3 OR EXISTS (SELECT 1 FROM passkeys WHERE user_id = $1 AND id <> $2))
       RETURNING id`,
      [userId, id, user.has_password],
    );
    if (rows.length === 1) return 'removed';
    const [exists] = await tx.query('SELECT 1 FROM passkeys WHERE user_id = $1 AND id = $2', [userId, id]);
    return exists ? 'last_credential' : 'not_found';
  });
}
