/**
 * The real-server rows run each service's compiled JavaScript (`node services/<name>/dist/main.js`), as
 * the images do. ensureBuilt() runs `pnpm build` once when a service's or the shared package's build
 * output is missing or older than its sources, so the bench never measures yesterday's code.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { serviceImage } from '../test/dockerfile';
import { ROOT } from '../test/support';
import type { ServiceName } from './stack';

/** What the build of a package reads: its sources, its package.json and its build configuration. */
const PACKAGES = ['packages/common', 'services/identity', 'services/transactions', 'services/prices'];
const SHARED_INPUTS = ['tsconfig.base.json', 'tsconfig.build.json', 'pnpm-lock.yaml'];

/** The file tsc writes last-modified on every build of the package (its entry point). */
const entryOf = (dir: string) => path.join(ROOT, dir, 'dist', dir === 'packages/common' ? 'index.js' : 'main.js');

export const serviceEntry = (name: ServiceName) => `services/${name}/dist/main.js`;

function newest(file: string): number {
  const stat = fs.statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of fs.readdirSync(file)) latest = Math.max(latest, newest(path.join(file, entry)));
  return latest;
}

/** The packages whose dist is missing or older than one of its inputs. */
export function staleBuilds(): string[] {
  const shared = Math.max(...SHARED_INPUTS.map((f) => newest(path.join(ROOT, f))));
  return PACKAGES.filter((dir) => {
    const entry = entryOf(dir);
    if (!fs.existsSync(entry)) return true;
    const inputs = ['src', 'package.json', 'tsconfig.build.json'].map((f) => newest(path.join(ROOT, dir, f)));
    return Math.max(shared, ...inputs) > fs.statSync(entry).mtimeMs;
  });
}

/** Builds (`pnpm build`, about 30 s) when a build is stale; says so on `log`. */
export function ensureBuilt(log: (line: string) => void): void {
  const stale = staleBuilds();
  if (!stale.length) return;
  log(`pnpm build (dist missing or older than the sources: ${stale.join(', ')})`);
  execFileSync('pnpm', ['build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const still = staleBuilds();
  if (still.length) throw new Error(`pnpm build left these builds older than their sources: ${still.join(', ')}`);
}

/**
 * NODE_OPTIONS of the service's image (`ENV NODE_OPTIONS=…` in the stages of the root Dockerfile that
 * `--build-arg SERVICE=<name>` builds), so the bench runs the services with the heap settings they have in
 * production; undefined when it sets none.
 */
export function imageNodeOptions(name: ServiceName): string | undefined {
  const env = serviceImage(name)
    .instructions.filter((l) => l.startsWith('ENV '))
    .join(' ');
  return /\bNODE_OPTIONS="([^"]*)"/.exec(env)?.[1];
}

/** How the real-server rows run the services, for the report: `NODE_OPTIONS='…' node services/<name>/dist/main.js`. */
export function realCommandLine(services: readonly ServiceName[]): string {
  const options = [...new Set(services.map((name) => imageNodeOptions(name) ?? ''))];
  const run = 'node services/<name>/dist/main.js';
  if (options.length === 1) return options[0] ? `NODE_OPTIONS='${options[0]}' ${run}` : run;
  return `${run} (NODE_OPTIONS: ${services.map((name) => `${name} '${imageNodeOptions(name) ?? ''}'`).join(', ')})`;
}
