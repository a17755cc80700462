import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { manage, ROOT, runTsx, stackEnv, startStack } from './support';

describe('pnpm start', () => {
  it('brings all three services to ready, stops cleanly on Ctrl-C, and finds the same data again', async () => {
    const env = await stackEnv();
    const first = await startStack(env);
    expect(first.output()).toContain('Attest is running');
    // one embedded database for the three services, each in its own schema
    expect(first.output()).toContain(
      `data: embedded Postgres in ${path.join(env.DATA_DIR!, 'pg')} (shared, schema identity)`,
    );
    expect(first.output()).toContain(
      `data: embedded Postgres in ${path.join(env.DATA_DIR!, 'pg')} (shared, schema prices)`,
    );
    expect(
      ['identity', 'transactions', 'prices'].filter((s) => fs.existsSync(path.join(env.DATA_DIR!, s, 'pg'))),
    ).toEqual([]);
    expect(first.output()).toContain('pnpm --silent manage app create');
    for (const [name, url] of Object.entries(first.urls)) {
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      // prices can also serve from its cache: it reports whether that holds a fresh price
      const checks =
        name === 'prices' ? { database: 'ok', cache: 'ok', price_snapshot: 'ok' } : { database: 'ok', cache: 'ok' };
      expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ status: 'ready', checks });
    }
    const tokenFile = path.join(env.DATA_DIR!, 'admin-token');
    const token = fs.readFileSync(tokenFile, 'utf8');
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
    const stopped = await first.stop('SIGINT');
    expect(stopped.code).toBe(0);
    expect(stopped.ms).toBeLessThan(5000);

    const second = await startStack(env);
    expect(fs.readFileSync(tokenFile, 'utf8')).toBe(token);
    expect(second.output()).not.toContain('migrations applied');
    expect((await second.stop('SIGTERM')).code).toBe(0);
  }, 150000);

  it('keeps the per-service databases an earlier version left, and their data', async () => {
    const env = await stackEnv();
    // an earlier layout: prices alone, as before, in DATA_DIR/prices/pg, with a price set by hand
    // node with tsx as a loader: tsx's CLI would SIGKILL a program slow to answer the Ctrl-C below
    const earlier = spawn(process.execPath, ['--import', 'tsx', 'services/prices/src/main.ts'], {
      cwd: ROOT,
      env,
      stdio: 'ignore',
    });
    const exited = new Promise((r) => earlier.on('exit', r));
    try {
      for (let ready = false, deadline = Date.now() + 60000; !ready;) {
        if (Date.now() > deadline) throw new Error('prices did not start');
        ready = await fetch(`http://127.0.0.1:${env.PRICES_PORT}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (!ready) await new Promise((r) => setTimeout(r, 100));
      }
      const set = await manage(['price', 'set', '--token', 'ETH', '--fiat', 'EUR', '--amount', '3000.5'], env);
      expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: '' });
    } finally {
      earlier.kill('SIGINT');
      await exited;
    }
    const stack = await startStack(env, 90000); // three embedded databases start here, as before
    try {
      expect(stack.output()).toContain('keeping the embedded databases of an earlier version');
      expect(stack.output()).toContain(`data: embedded Postgres in ${path.join(env.DATA_DIR!, 'prices', 'pg')}`);
      expect(fs.existsSync(path.join(env.DATA_DIR!, 'pg'))).toBe(false);
      const res = await fetch(
        `${stack.urls.prices}/public/v1/prices/latest/wld?fiatCurrencies=EUR&cryptoCurrencies=ETH`,
      );
      expect(((await res.json()) as { result: { prices: { ETH: { EUR: unknown } } } }).result.prices.ETH.EUR).toEqual({
        asset: 'EUR',
        amount: '3000500000',
        decimals: 6,
        symbol: 'EUR',
      });
    } finally {
      expect((await stack.stop('SIGTERM')).code).toBe(0);
    }
  }, 240000);

  it('names the variable when a port is taken', async () => {
    const net = await import('node:net');
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, r));
    const taken = (blocker.address() as import('node:net').AddressInfo).port;
    try {
      const env = await stackEnv();
      env.TRANSACTIONS_PORT = String(taken);
      const result = await runTsx('scripts/start.ts', [], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`port ${taken} is already in use`);
      expect(result.stderr).toContain('set TRANSACTIONS_PORT to use another port');
    } finally {
      blocker.close();
    }
  }, 60000);

  it.each([
    [{ IDENTITY_PORT: 'abc' }, 'IDENTITY_PORT must be a port number (got abc)'],
    [{ DATABASE_URL: 'nonsense' }, 'DATABASE_URL must be a postgres:// URL'],
    [{ REDIS_URL: 'nonsense' }, 'REDIS_URL must be a redis:// URL'],
  ])(
    'refuses a bad environment %p with one clear message',
    async (bad, message) => {
      const env = await stackEnv(bad);
      const result = await runTsx('scripts/start.ts', [], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('Invalid environment:');
      expect(result.stderr).toContain(message);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    },
    30000,
  );
});

/** Is any process of the group left (a zombie counts until its parent reaps it)? */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check());) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const listening = (port: string | undefined) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/**
 * `pnpm start` as a person or systemd runs it: pnpm, its shell and the program in a process group of
 * their own (the terminal's foreground job, a unit's control group), the output in a file.
 */
function spawnPnpmStart(env: NodeJS.ProcessEnv) {
  const logFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attest-start-log-')), 'output.log');
  const fd = fs.openSync(logFile, 'a');
  const pnpm = spawn('pnpm', ['start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  const pgid = pnpm.pid!;
  const log = () => fs.readFileSync(logFile, 'utf8');
  const ports = [
    env.IDENTITY_PORT,
    env.TRANSACTIONS_PORT,
    env.PRICES_PORT,
    env.IDENTITY_ADMIN_PORT,
    env.TRANSACTIONS_ADMIN_PORT,
    env.PRICES_ADMIN_PORT,
    env.DEMO_PORT,
  ];
  /** What each line of the program's log says (its JSON lines; the banner and pnpm's lines are text). */
  const messages = () =>
    log()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: string; message: string; signal?: string });
  return { pnpm, pgid, log, messages, ports };
}

async function pnpmStart(env: NodeJS.ProcessEnv) {
  const stack = spawnPnpmStart(env);
  const { pgid, log } = stack;
  try {
    await until('Attest is running', () => log().includes('Attest is running'), 90000);
    for (const port of [env.IDENTITY_PORT, env.TRANSACTIONS_PORT, env.PRICES_PORT])
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
  } catch (err) {
    stopGroup(pgid);
    throw err;
  }
  return stack;
}

/** A test that fails must not leave a stack behind: SIGTERM to the whole group, the orderly way. */
function stopGroup(pgid: number): void {
  if (groupAlive(pgid)) process.kill(-pgid, 'SIGTERM');
}

describe('pnpm start and signals', () => {
  it('one Ctrl-C (SIGINT to the whole process group) drains, closes the database and exits 0', async () => {
    const env = await stackEnv({ LOG_LEVEL: 'info', DEMO_ENABLED: 'false' });
    const stack = await pnpmStart(env);
    try {
      process.kill(-stack.pgid, 'SIGINT');
      await until('every process of pnpm start has exited', () => !groupAlive(stack.pgid), 60000);
      const said = stack.messages().filter((m) => m.level !== 'info' || !('request_id' in m));
      expect(said.filter((m) => m.level === 'error' || m.level === 'warn')).toEqual([]);
      // one request to stop, however many copies of the signal arrive (the group's, a launcher's relay):
      // no force quit, the drain and the close of the embedded database run to the end
      expect(said.filter((m) => m.message === 'shutting down')).toHaveLength(1);
      expect(said.at(-1)).toMatchObject({ level: 'info', message: 'stopped', exit_code: 0 });
      for (const port of stack.ports)
        expect({ port, listening: await listening(port) }).toEqual({ port, listening: false });
    } finally {
      stopGroup(stack.pgid);
    }
  }, 180000);

  it('a Ctrl-C while the first start creates the embedded database: the start completes, then stops in order', async () => {
    const env = await stackEnv({ LOG_LEVEL: 'info', DEMO_ENABLED: 'false' });
    const stack = spawnPnpmStart(env);
    try {
      // the database is being created (in a child process of its own, in the same process group)
      const staging = path.join(env.DATA_DIR!, 'pg.initializing');
      await until('the embedded database is being created', () => fs.existsSync(staging), 90000);
      process.kill(-stack.pgid, 'SIGINT');
      await until('every process of pnpm start has exited', () => !groupAlive(stack.pgid), 90000);
      expect(stack.log()).not.toContain('Failed to start');
      const said = stack.messages().filter((m) => m.level !== 'info' || !('request_id' in m));
      expect(said.filter((m) => m.level === 'error' || m.level === 'warn')).toEqual([]);
      expect(said.filter((m) => m.message === 'shutting down')).toHaveLength(1);
      expect(said.at(-1)).toMatchObject({ level: 'info', message: 'stopped', exit_code: 0 });
      // a whole database, moved into place: the next start opens it
      expect(fs.existsSync(path.join(env.DATA_DIR!, 'pg', 'PG_VERSION'))).toBe(true);
      expect(fs.existsSync(staging)).toBe(false);
    } finally {
      stopGroup(stack.pgid);
    }
  }, 180000);

  it.each(['SIGTERM', 'SIGKILL'] as const)(
    '%s to the pnpm process alone: the services stop with it, no process left, the ports free',
    async (signal) => {
      const env = await stackEnv({ LOG_LEVEL: 'info', DEMO_ENABLED: 'false' });
      const stack = await pnpmStart(env);
      try {
        process.kill(stack.pnpm.pid!, signal);
        await until('every process of pnpm start has exited', () => !groupAlive(stack.pgid), 60000);
        for (const port of stack.ports)
          expect({ port, listening: await listening(port) }).toEqual({ port, listening: false });
        const said = stack.messages();
        expect(said.filter((m) => m.level === 'error')).toEqual([]);
        // pnpm passes a SIGTERM on; after a SIGKILL the program sees its parent gone
        expect(said.filter((m) => m.message === 'shutting down')).toEqual([
          signal === 'SIGKILL'
            ? expect.objectContaining({ reason: 'parent exited' })
            : expect.objectContaining({ message: 'shutting down' }),
        ]);
        expect(said.at(-1)).toMatchObject({ message: 'stopped', exit_code: 0 });
      } finally {
        stopGroup(stack.pgid);
      }
    },
    180000,
  );
});
