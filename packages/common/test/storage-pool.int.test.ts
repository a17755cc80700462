import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commonEnv, loadEnv, openStorage, type CommonConfig } from '../src';
import { randomHex, testLogger } from './support';

const url = process.env.TEST_DATABASE_URL;

(url ? describe : describe.skip)('DATABASE_POOL_SIZE (a real Postgres)', () => {
  /** How many connections serve eight queries sent at once, each held open by the server for 100 ms. */
  const connectionsFor = async (env: Record<string, string>) => {
    const config = loadEnv<CommonConfig>(commonEnv, { DATABASE_URL: url as string, ...env });
    const migrations = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-pool-'));
    const storage = await openStorage(`pool_${randomHex(4)}`, config, migrations, testLogger);
    try {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          storage.db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.1)::text AS slept'),
        ),
      );
      return new Set(answers.map(([row]) => row.pid)).size;
    } finally {
      await storage.db.query(`DROP SCHEMA ${storage.db.schema} CASCADE`);
      await storage.close();
    }
  };

  it('opens at most DATABASE_POOL_SIZE connections per service, 10 unless set', async () => {
    expect(await connectionsFor({ DATABASE_POOL_SIZE: '2' })).toBe(2);
    expect(await connectionsFor({ DATABASE_POOL_SIZE: '5' })).toBe(5);
    expect(await connectionsFor({})).toBe(8);
  });
});
