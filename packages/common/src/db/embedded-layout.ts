import fs from 'node:fs';
import path from 'node:path';

export type EmbeddedLayout = { kind: 'shared'; dir: string } | { kind: 'per-service'; found: string[] };

/**
 * Where `pnpm start` keeps embedded data: one database for all its services in DATA_DIR/pg, unless
 * an earlier version left one per service (DATA_DIR/<service>/pg) and there is no shared one yet:
 * those are then kept and used as they are, so an upgrade loses nothing.
 */
export function embeddedLayout(dataDir: string, services: readonly string[]): EmbeddedLayout {
  const dir = path.resolve(dataDir, 'pg');
  const found = services.map((s) => path.resolve(dataDir, s, 'pg')).filter((d) => fs.existsSync(d));
  return found.length > 0 && !fs.existsSync(dir) ? { kind: 'per-service', found } : { kind: 'shared', dir };
}
