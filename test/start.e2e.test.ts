import { spawn } from 'node:child_process';
import fs from 'node:fs';
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
    const earlier = spawn(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['services/prices/src/main.ts'], {
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
      expect(set.code).toBe(0);
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
