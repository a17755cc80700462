import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../packages/common/test/support/throwaway';
import { ROOT } from './support';

const SERVICES = [
  { name: 'identity', port: 'IDENTITY_PORT', admin: 'IDENTITY_ADMIN_PORT' },
  { name: 'transactions', port: 'TRANSACTIONS_PORT', admin: 'TRANSACTIONS_ADMIN_PORT' },
  { name: 'prices', port: 'PRICES_PORT', admin: 'PRICES_ADMIN_PORT' },
] as const;

/** What each image contains: `pnpm deploy --prod` of one service, run with plain node, no sources or dev tools. */
describe('per-service production folders (the Dockerfile’s build stage)', () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-deploy-'));

  beforeAll(() => {
    execFileSync('pnpm', ['-r', '--filter', './packages/common', '--filter', './services/*', 'run', 'build'], {
      cwd: ROOT,
      stdio: 'pipe',
    });
  }, 180000);

  it.each(SERVICES)(
    '$name: deploys with production dependencies only and becomes ready',
    async ({ name, port, admin }) => {
      const dir = path.join(out, name);
      execFileSync('pnpm', ['--filter', `@attest/${name}`, 'deploy', '--prod', dir], { cwd: ROOT, stdio: 'pipe' });
      expect(fs.existsSync(path.join(dir, 'dist', 'main.js'))).toBe(true);
      expect(fs.existsSync(path.join(dir, 'migrations', '001_init.sql'))).toBe(true);
      // the audit migration includes packages/common/migrations/audit.sql: shipped with @attest/common
      expect(fs.existsSync(path.join(dir, 'node_modules', '@attest', 'common', 'migrations', 'audit.sql'))).toBe(true);
      expect(fs.existsSync(path.join(dir, 'src'))).toBe(false);
      for (const dev of ['jest', 'typescript', 'tsx', 'supertest', 'ganache', 'openid-client'])
        expect(fs.existsSync(path.join(dir, 'node_modules', dev))).toBe(false);

      const [p, a] = [await freePort(), await freePort()];
      const child = spawn(process.execPath, ['dist/main.js'], {
        cwd: dir,
        env: {
          PATH: process.env.PATH,
          [port]: String(p),
          [admin]: String(a),
          DATA_DIR: path.join(dir, 'data'),
          LOG_LEVEL: 'warn',
          NODE_ENV: 'production',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      try {
        const deadline = Date.now() + 30000;
        let ready: unknown;
        while (Date.now() < deadline && child.exitCode === null) {
          try {
            const res = await fetch(`http://127.0.0.1:${p}/readyz`);
            if (res.ok) {
              ready = await res.json();
              break;
            }
          } catch {
            // starting
          }
          await new Promise((r) => setTimeout(r, 200));
        }
        const checks =
          name === 'prices' ? { database: 'ok', cache: 'ok', price_snapshot: 'ok' } : { database: 'ok', cache: 'ok' };
        expect({ ready, stderr }).toEqual({ ready: { status: 'ready', checks }, stderr: '' });
      } finally {
        if (child.exitCode === null) {
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          await exited;
        }
      }
      expect(child.exitCode).toBe(0);
    },
    180000,
  );
});
