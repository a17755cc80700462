import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { embeddedPool, startEmbeddedPostgres } from '../src/db/embedded-postgres';

jest.setTimeout(120000);

describe('the embedded database listens on a unix socket only its own user can reach', () => {
  it('serves pg through a socket in a private directory, and removes the directory when stopped', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-socket-test-'));
    const server = await startEmbeddedPostgres(path.join(dataDir, 'pg'));
    const url = new URL(server.url);
    const socketDir = url.searchParams.get('host')!;
    try {
      // no TCP port: the host is a directory, and pg reaches <dir>/.s.PGSQL.5432
      expect(url.port).toBe('');
      expect(path.isAbsolute(socketDir)).toBe(true);
      const dir = fs.statSync(socketDir);
      expect(dir.isDirectory()).toBe(true);
      expect(dir.mode & 0o777).toBe(0o700);
      expect(dir.uid).toBe(process.getuid!());
      expect(fs.statSync(path.join(socketDir, '.s.PGSQL.5432')).isSocket()).toBe(true);
      // a socket's path fits the 107 bytes of sockaddr_un
      expect(Buffer.byteLength(path.join(socketDir, '.s.PGSQL.5432'))).toBeLessThanOrEqual(107);

      const pool = embeddedPool(server.url);
      try {
        await pool.query('CREATE TABLE t (id int PRIMARY KEY, name text)');
        await pool.query('INSERT INTO t VALUES ($1, $2)', [1, 'one']);
        expect((await pool.query('SELECT name FROM t WHERE id = $1', [1])).rows).toEqual([{ name: 'one' }]);
      } finally {
        await pool.end();
      }
    } finally {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    expect(fs.existsSync(socketDir)).toBe(false);
  });

  it('names the directory when it cannot make the socket directory, and opens no database', async () => {
    await expect(startEmbeddedPostgres(undefined, { socketParent: '/nonexistent-attest-tmp' })).rejects.toThrow(
      /could not make the embedded database's socket directory in \/nonexistent-attest-tmp \(set TMPDIR to a writable directory\): ENOENT/,
    );
  });

  it('a process that exits without stopping the database leaves no socket directory behind', () => {
    const program = `
      const { startEmbeddedPostgres } = require(${JSON.stringify(path.resolve(__dirname, '../src/db/embedded-postgres'))});
      startEmbeddedPostgres().then((server) => {
        process.stdout.write(new URL(server.url).searchParams.get('host'));
        process.exit(0);
      });`;
    const socketDir = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', program], {
      cwd: path.resolve(__dirname, '..'),
      encoding: 'utf8',
    });
    expect(socketDir).toMatch(/attest-pg-/);
    expect(fs.existsSync(socketDir)).toBe(false);
  });

  it('two embedded databases in one process get sockets of their own', async () => {
    const [a, b] = await Promise.all([startEmbeddedPostgres(), startEmbeddedPostgres()]);
    try {
      expect(new URL(a.url).searchParams.get('host')).not.toBe(new URL(b.url).searchParams.get('host'));
      const [pa, pb] = [embeddedPool(a.url), embeddedPool(b.url)];
      try {
        await pa.query('CREATE TABLE only_in_a (x int)');
        await expect(pb.query('SELECT * FROM only_in_a')).rejects.toThrow(/does not exist/);
      } finally {
        await Promise.all([pa.end(), pb.end()]);
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
