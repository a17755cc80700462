import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

function onPath(name: string): boolean {
  if (name.startsWith('/')) return fs.existsSync(name);
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * A describe() for tests that need programs from Debian (redis-server, initdb, nginx, kubectl).
 * `.ci/run` installs them, and under CI a missing one fails the suite; on a developer machine
 * without them the suite is skipped with a message saying what to install.
 */
export function describeNeeding(binaries: string[], title: string, body: () => void): void {
  const missing = binaries.filter((b) => !onPath(b));
  if (missing.length === 0 || process.env.CI === 'true') return describe(title, body);
  describe.skip(`${title} [skipped: ${missing.join(', ')} not installed; bash .ci/run installs them]`, body);
}

export function pgBinary(tool: string): string {
  const base = '/usr/lib/postgresql';
  const version = fs.existsSync(base) ? fs.readdirSync(base).sort().pop() : undefined;
  return version ? `${base}/${version}/bin/${tool}` : `/usr/lib/postgresql/missing/bin/${tool}`;
}
