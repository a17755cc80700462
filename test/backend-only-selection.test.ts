import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');

/** The test files jest would run, relative to the repository, with the given environment added. */
function listed(env: NodeJS.ProcessEnv): string[] {
  const out = execFileSync(process.execPath, [require.resolve('jest/bin/jest'), '--listTests'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return out
    .split('\n')
    .filter(Boolean)
    .map((file) => path.relative(ROOT, file))
    .sort();
}

describe('TEST_BACKEND_ONLY=true: the Postgres + Redis run takes only the files that use the test storage', () => {
  const every = listed({ TEST_BACKEND_ONLY: '' });
  const backendOnly = listed({ TEST_BACKEND_ONLY: 'true' });
  const skipped = every.filter((file) => !backendOnly.includes(file));

  it('keeps every file that makes test storage itself, and skips a file that makes none', () => {
    const direct = every.filter((file) =>
      /\b(testStorage|testDatabase|testCache|testBus|freshDatabase)\(/.test(
        fs.readFileSync(path.join(ROOT, file), 'utf8'),
      ),
    );
    expect(direct.length).toBeGreaterThan(10);
    for (const file of direct) expect(backendOnly).toContain(file);
    // pure unit tests: the same on both backends
    expect(skipped).toContain('packages/common/test/app-error.test.ts');
    expect(skipped).toContain('packages/common/test/write-batcher.test.ts');
    expect(backendOnly.length).toBeLessThan(every.length);
  });

  it('keeps a file that reaches the storage only through a helper it imports', () => {
    // identity's account tests make their storage through services/identity/test/support.ts
    const file = 'services/identity/test/account-sessions.int.test.ts';
    expect(fs.readFileSync(path.join(ROOT, file), 'utf8')).not.toMatch(/\btestStorage\(|TEST_DATABASE_URL/);
    expect(backendOnly).toContain(file);
  });

  it('skips no file that names the storage variables', () => {
    for (const file of skipped)
      expect([file, fs.readFileSync(path.join(ROOT, file), 'utf8')]).not.toEqual([
        file,
        expect.stringMatching(/TEST_DATABASE_URL|TEST_REDIS_URL/),
      ]);
  });
});
