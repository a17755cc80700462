/** A server program in its own process (pinned to the server core), with readiness and a clean stop. */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../test/support';
import { listensOn, processTree, serviceProcess, spawnServer, type Pinning } from './system';

export const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
/** `pnpm start` as a person runs it: pnpm, and the program its script runs (`exec node --import tsx scripts/start.ts`). */
export const PNPM_START = 'pnpm start';

export interface ServerProcess {
  name: string;
  child: ChildProcess;
  logFile: string;
  /** The node process that runs the program (below taskset, and below pnpm or the tsx CLI). */
  nodePid(): number;
  /** Every process of the server (pnpm, a shell, tsx, node, whatever they started): what memory readings add up. */
  pids(): number[];
  stop(): Promise<void>;
}

let started = 0;

/**
 * Starts `script` (relative to the repository root): compiled JavaScript (`.js`) runs in node itself, as
 * production runs it; TypeScript (`.ts`) through tsx, as the bench's references run; PNPM_START is
 * `pnpm start` itself (pnpm, which runs the program in a child process, and waits for it).
 */
export function startServer(
  pinning: Pinning,
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  logDir: string,
): ServerProcess {
  const logFile = path.join(logDir, `${String(++started).padStart(2, '0')}-${name.replace(/[^a-z0-9-]+/gi, '-')}.log`);
  const pnpmStart = script === PNPM_START;
  // profiled, pnpm start's program runs in node itself (node's flags would reach pnpm, not the program)
  const program = pnpmStart ? 'scripts/start.ts' : script;
  const typescript = program.endsWith('.ts');
  // BENCH_CPU_PROF=DIR: each server runs in node itself (TypeScript with tsx as a loader, not its CLI,
  // which would run the program in a child process that node's profiling flags do not reach) and
  // writes a V8 CPU profile to DIR when it stops. Unpinned: V8's sampling thread, on the one core of a
  // busy server, would only get to run when the server is idle, and the profile would show nothing but idle.
  const profileDir = process.env.BENCH_CPU_PROF;
  // Each server gets a folder of its own with node's default profile names (pid and thread id):
  // tsx's loader runs in a worker thread that writes a profile too, and a fixed name would let it
  // overwrite the main thread's (the larger file).
  const profileFolder = profileDir ? path.resolve(profileDir, path.basename(logFile, '.log')) : '';
  const child = profileDir
    ? spawnServer(
        { pinned: false, note: 'profiling' },
        process.execPath,
        ['--cpu-prof', `--cpu-prof-dir=${profileFolder}`, ...(typescript ? ['--import', 'tsx'] : []), program],
        { cwd: ROOT, env, logFile },
      )
    : pnpmStart
      ? spawnServer(pinning, 'pnpm', ['start'], { cwd: ROOT, env, logFile })
      : typescript
        ? spawnServer(pinning, TSX, [script], { cwd: ROOT, env, logFile })
        : spawnServer(pinning, process.execPath, [script], { cwd: ROOT, env, logFile });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    child,
    logFile,
    nodePid: () => serviceProcess(child.pid!),
    pids: () => (child.exitCode === null && child.signalCode === null ? processTree(child.pid!) : []),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The port chosen for a server was taken by another program before the server could listen. */
export class PortTaken extends Error {}

const tail = (file: string) => {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
};

/** Resolves once `url` answers `ok(status)` from a socket of this server; fails when the process exits first or after timeoutMs. */
export async function waitReady(
  server: ServerProcess,
  url: string,
  timeoutMs = 120000,
  ok = (status: number) => status === 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) {
      const output = tail(server.logFile);
      if (/EADDRINUSE|port .* (is )?(taken|in use)/i.test(output))
        throw new PortTaken(`${server.name}: a port was taken meanwhile:\n${output}`);
      throw new Error(`${server.name} exited with ${server.child.exitCode}:\n${output}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (ok(res.status)) {
        if (listensOn(server.child.pid!, Number(new URL(url).port))) return;
        throw new PortTaken(`${server.name}: another program answers on ${url}`);
      }
    } catch (err) {
      if (err instanceof PortTaken) throw err;
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${server.name} was not ready at ${url} within ${timeoutMs} ms:\n${tail(server.logFile)}`);
}
