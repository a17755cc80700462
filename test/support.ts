import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../packages/common/test/support/throwaway';

export const ROOT = path.resolve(__dirname, '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

export interface Stack {
  env: NodeJS.ProcessEnv;
  urls: { identity: string; transactions: string; prices: string };
  child: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; ms: number }>;
}

/** Ports and a data directory of its own, so it never meets a developer's running `pnpm start`. */
export async function stackEnv(extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const [a, b, c, d, e, f, g] = await Promise.all(Array.from({ length: 7 }, freePort));
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'attest-data-')),
    IDENTITY_PORT: String(a),
    TRANSACTIONS_PORT: String(b),
    PRICES_PORT: String(c),
    IDENTITY_ADMIN_PORT: String(d),
    TRANSACTIONS_ADMIN_PORT: String(e),
    PRICES_ADMIN_PORT: String(f),
    DEMO_PORT: String(g),
    BASE_URL: `http://localhost:${a}`,
    API_URL: `http://localhost:${b}`,
    PRICES_URL: `http://localhost:${c}`,
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** Runs `command` in the repository root and resolves with its exit code and whole output. */
function runIn(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    // 'close', not 'exit': the output pipes are read to their end
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export const runTsx = (script: string, args: string[], env: NodeJS.ProcessEnv) => runIn(TSX, [script, ...args], env);

const SCRIPTS = (
  JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string; manage: string } }
).scripts;
/** package.json's `manage` script (`node --require tsx/cjs packages/cli/src/main.ts`), split into words. */
const [MANAGE_NODE, ...MANAGE_ARGS] = SCRIPTS.manage.split(' ');
/** package.json's `start` script (`exec node --import tsx scripts/start.ts`), split into words after `exec`. */
const [START_NODE, ...START_ARGS] = SCRIPTS.start.replace(/^exec /, '').split(' ');

/** `pnpm manage`'s program, run as package.json's script runs it (this node for its `node`), without pnpm. */
export const manage = (args: string[], env: NodeJS.ProcessEnv) =>
  runIn(MANAGE_NODE === 'node' ? process.execPath : MANAGE_NODE, [...MANAGE_ARGS, ...args], env);

async function waitReady(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} was not ready in time`);
}

/** Resolves once pnpm start printed its "Attest is running" banner; fails at the deadline. */
async function startedBanner(output: () => string, deadline: number): Promise<void> {
  while (!output().includes('Attest is running')) {
    if (Date.now() > deadline) throw new Error(`pnpm start did not finish starting in time: ${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `pnpm start`'s program, with its own ports and data directory; resolves once all three are ready. */
export async function startStack(env: NodeJS.ProcessEnv, timeoutMs = 60000): Promise<Stack & { readyMs: number }> {
  const started = Date.now();
  // node itself with tsx as a loader, as the script runs it, not tsx's CLI: the CLI runs the program in
  // a child, passes a signal on, and when the child does not answer within 30 ms (a busy machine)
  // kills it with SIGKILL and exits 130; a person's Ctrl-C never meets that process
  const child = spawn(START_NODE === 'node' ? process.execPath : START_NODE, START_ARGS, { cwd: ROOT, env });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const urls = { identity: env.BASE_URL!, transactions: env.API_URL!, prices: env.PRICES_URL! };
  // readiness on the services' own ports: the public URLs may point at a gateway not started yet
  const local = [env.IDENTITY_PORT, env.TRANSACTIONS_PORT, env.PRICES_PORT].map((p) => `http://127.0.0.1:${p}`);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  try {
    await Promise.race([
      // ready, and pnpm start done starting (its banner comes once the demo app is up too)
      Promise.all([...local.map((u) => waitReady(u, deadline)), startedBanner(() => output, deadline)]),
      exited.then((code) => {
        throw new Error(`pnpm start exited with ${code}: ${output}`);
      }),
    ]);
  } catch (err) {
    // a stack that was not ready in time must not outlive the test (three embedded Postgres on a
    // shared machine). SIGTERM, which the program answers by stopping its databases; SIGKILL would orphan them.
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(force);
    }
    throw err;
  }
  return {
    env,
    urls,
    child,
    readyMs: Date.now() - started,
    output: () => output,
    async stop(signal: NodeJS.Signals = 'SIGINT') {
      const t0 = Date.now();
      child.kill(signal);
      const code = await exited;
      return { code, ms: Date.now() - t0 };
    },
  };
}
