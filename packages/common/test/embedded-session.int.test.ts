import { Client } from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded-postgres';

jest.setTimeout(120000);

/** A client of the embedded database, through its in-process wire (as embeddedPool's connections are). */
const clientOf = (server: EmbeddedPostgres) =>
  new Client({ stream: server.connect, user: 'postgres', database: 'postgres' });

describe('the embedded database’s in-process wire (PGlite is one session)', () => {
  let server: EmbeddedPostgres;
  beforeAll(async () => {
    server = await startEmbeddedPostgres();
    const setup = clientOf(server);
    await setup.connect();
    await setup.query('CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)');
    await setup.end();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers simple and extended queries, prepared statements, and errors with their SQLSTATE', async () => {
    const client = clientOf(server);
    await client.connect();
    try {
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      // Parse, Bind, Describe, Execute and Sync written together: one batch, each answered
      const insert = { name: 'insert-note', text: 'INSERT INTO notes (id, body) VALUES ($1, $2) RETURNING id, body' };
      expect((await client.query({ ...insert, values: [1, 'first'] })).rows).toEqual([{ id: 1, body: 'first' }]);
      // the prepared statement again: Bind, Execute and Sync only
      expect((await client.query({ ...insert, values: [2, 'second'] })).rows).toEqual([{ id: 2, body: 'second' }]);
      await expect(client.query({ ...insert, values: [1, 'again'] })).rejects.toMatchObject({ code: '23505' });
      // after an error the session goes on (Sync ended the failed batch)
      expect((await client.query('SELECT count(*)::int AS n FROM notes')).rows).toEqual([{ n: 2 }]);
      // many rows and a large answer come back whole
      const big = await client.query<{ s: string }>(`SELECT repeat('x', 100000) AS s FROM generate_series(1, 30)`);
      expect(big.rows).toHaveLength(30);
      expect(big.rows.every((r) => r.s.length === 100000)).toBe(true);
    } finally {
      await client.query('DELETE FROM notes');
      await client.end();
    }
  });

  it('serves one connection at a time: the next waits, and a transaction left open is rolled back first', async () => {
    const first = clientOf(server);
    await first.connect();
    await first.query('BEGIN');
    await first.query(`INSERT INTO notes (id, body) VALUES (10, 'never committed')`);

    const second = clientOf(server);
    let secondConnected = false;
    const connecting = second.connect().then(() => (secondConnected = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // waiting: PGlite is inside the first connection's transaction
    expect(secondConnected).toBe(false);

    // the first client goes away without COMMIT: its connection ends, the transaction is rolled back
    await first.end();
    await connecting;
    try {
      expect((await second.query('SELECT count(*)::int AS n FROM notes WHERE id = 10')).rows).toEqual([{ n: 0 }]);
      // and the session is no longer in a transaction
      await second.query('BEGIN');
      await second.query(`INSERT INTO notes (id, body) VALUES (11, 'committed')`);
      await second.query('COMMIT');
      expect((await second.query('SELECT body FROM notes WHERE id = 11')).rows).toEqual([{ body: 'committed' }]);
    } finally {
      await second.query('DELETE FROM notes');
      await second.end();
    }
  });

  it('a client destroyed mid-transaction (no Terminate) has its transaction rolled back too', async () => {
    const first = clientOf(server);
    await first.connect();
    first.on('error', () => undefined);
    await first.query('BEGIN');
    await first.query(`INSERT INTO notes (id, body) VALUES (20, 'lost')`);
    (first as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();

    const second = clientOf(server);
    await second.connect();
    try {
      expect((await second.query('SELECT count(*)::int AS n FROM notes WHERE id = 20')).rows).toEqual([{ n: 0 }]);
    } finally {
      await second.end();
    }
  });

  it('refuses a connection past the ones that may wait, with SQLSTATE 53300', async () => {
    const served = clientOf(server);
    await served.connect();
    const waiting = Array.from({ length: 16 }, () => clientOf(server));
    const connecting = waiting.map((c) => c.connect());
    await new Promise((resolve) => setTimeout(resolve, 100));
    const refused = clientOf(server);
    await expect(refused.connect()).rejects.toMatchObject({ code: '53300' });
    await served.end();
    // each waiting connection is served in turn once the one before it ends
    for (const [i, client] of waiting.entries()) {
      await connecting[i];
      expect((await client.query('SELECT $1::int AS i', [i])).rows).toEqual([{ i }]);
      await client.end();
    }
  });

  it('ends its connections when stopped: their clients see the end, and a new one is refused (57P01)', async () => {
    const other = await startEmbeddedPostgres();
    const client = clientOf(other);
    await client.connect();
    const ended = new Promise((resolve) => client.once('end', resolve));
    client.on('error', () => undefined);
    await other.stop();
    await ended;
    await expect(clientOf(other).connect()).rejects.toMatchObject({ code: '57P01' });
  });
});
