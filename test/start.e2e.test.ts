import fs from 'node:fs';
import path from 'node:path';
import { runTsx, stackEnv, startStack } from './support';

describe('pnpm start', () => {
  it('brings all three services to ready, stops cleanly on Ctrl-C, and finds the same data again', async () => {
    const env = await stackEnv();
    const first = await startStack(env);
    expect(first.output()).toContain('Attest is running');
    expect(first.output()).toContain(`data: embedded Postgres in ${path.join(env.DATA_DIR!, 'identity', 'pg')}`);
    expect(first.output()).toContain('pnpm --silent manage app create');
    for (const [name, url] of Object.entries(first.urls)) {
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      // prices can also serve from its cache: it reports whether that holds a fresh price
      const checks = name === 'prices' ? { database: 'ok', cache: 'ok', price_snapshot: 'ok' } : { database: 'ok', cache: 'ok' };
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
  }, 90000);

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
  ])('refuses a bad environment %p with one clear message', async (bad, message) => {
    const env = await stackEnv(bad);
    const result = await runTsx('scripts/start.ts', [], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid environment:');
    expect(result.stderr).toContain(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  }, 30000);
});
