import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const ADMIN_TOKEN_FILE = 'admin-token';

/**
 * A secret from the environment when set; otherwise, in embedded mode only, one generated on first
 * start and kept at DATA_DIR/<file> with mode 0600 (safe when several services race to create it).
 */
export function resolveSecret(
  variable: string,
  explicit: string | undefined,
  dataDir: string,
  file: string,
  embedded: boolean,
): string {
  if (explicit) return explicit;
  if (!embedded)
    throw new Error(`${variable} is required when DATABASE_URL is set (secrets are generated only in embedded mode)`);
  const target = path.join(dataDir, file);
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  try {
    fs.writeFileSync(target, `${randomBytes(32).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return fs.readFileSync(target, 'utf8').trim();
}

/** The admin token: ADMIN_TOKEN, or the generated one in DATA_DIR/admin-token where `pnpm manage` finds it. */
export function resolveAdminToken(explicit: string | undefined, dataDir: string, embedded: boolean): string {
  return resolveSecret('ADMIN_TOKEN', explicit, dataDir, ADMIN_TOKEN_FILE, embedded);
}
