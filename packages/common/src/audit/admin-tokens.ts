import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../db';

/** Operator names: in the audit trail as the "who" of every admin request. */
export const OPERATOR_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const OPERATOR_NAME_RULE =
  'must be 1-64 characters: lowercase letters, digits, ".", "_" or "-", starting with a letter or digit';
/** The name of the single ADMIN_TOKEN. */
export const DEFAULT_OPERATOR = 'admin';

/** Admin tokens made by the CLI: `adm_` and 32 random bytes, base64url. */
export const STORED_ADMIN_TOKEN = /^adm_[A-Za-z0-9_-]{43}$/;
export const newAdminToken = () => `adm_${randomBytes(32).toString('base64url')}`;
/** 256 random bits need no slow hash: a plain SHA-256 cannot be reversed or guessed. */
export const adminTokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

export interface StoredAdminToken {
  name: string;
  createdAt: Date;
  createdBy: string;
}

interface Row {
  name: string;
  created_at: Date;
  created_by: string;
}

const toToken = (r: Row): StoredAdminToken => ({ name: r.name, createdAt: r.created_at, createdBy: r.created_by });

/** admin_tokens (each service's own schema): named operator tokens, only their hash kept. */
export function adminTokenStore(db: Queryable) {
  return {
    /** False when the name (or the token) is taken. */
    async insert(name: string, tokenHash: string, createdBy: string): Promise<boolean> {
      const rows = await db.query(
        'INSERT INTO admin_tokens (name, token_hash, created_by) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1',
        [name, tokenHash, createdBy],
      );
      return rows.length === 1;
    },
    async nameOf(tokenHash: string): Promise<string | null> {
      const [row] = await db.query<{ name: string }>('SELECT name FROM admin_tokens WHERE token_hash = $1', [
        tokenHash,
      ]);
      return row?.name ?? null;
    },
    async list(): Promise<StoredAdminToken[]> {
      return (await db.query<Row>('SELECT name, created_at, created_by FROM admin_tokens ORDER BY name')).map(toToken);
    },
    async remove(name: string): Promise<boolean> {
      return (await db.query('DELETE FROM admin_tokens WHERE name = $1 RETURNING 1', [name])).length === 1;
    },
  };
}
export type AdminTokenStore = ReturnType<typeof adminTokenStore>;

/**
 * `ADMIN_TOKENS` (`name:token,name:token`) and the single `ADMIN_TOKEN` (named "admin") as a list;
 * or a sentence naming the problem when the variable is malformed.
 */
export function parseAdminTokens(raw: string | undefined): { name: string; token: string }[] | string {
  if (!raw) return [];
  const out: { name: string; token: string }[] = [];
  for (const entry of raw.split(',').map((e) => e.trim())) {
    const at = entry.indexOf(':');
    const name = at > 0 ? entry.slice(0, at) : '';
    const token = at > 0 ? entry.slice(at + 1) : '';
    if (!OPERATOR_NAME.test(name)) return `each entry must be name:token, the name ${OPERATOR_NAME_RULE}`;
    if (token.length < 24) return `the token of ${name} must be at least 24 characters`;
    if (out.some((o) => o.name === name)) return `the name ${name} is given twice`;
    out.push({ name, token });
  }
  return out;
}
