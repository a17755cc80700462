import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuditJournal, AuditLog, type AuditEvent, type Db, type Queryable } from '../src';
import { capturingLogger } from './support';

const event = (n: number): AuditEvent => ({
  type: 'delegation.exchanged',
  actor: { type: 'app', id: 'app_agent', requestId: `req_${n}`, clientAddress: '127.0.0.1' },
  subject: `sub_${n}`,
  detail: { resource: 'https://api.example.test/mcp', token_id: `jti_${n}` },
});

const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-audit-journal-'));
  dirs.push(dir);
  return path.join(dir, 'journal');
};
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

const segments = (dir: string) => fs.readdirSync(dir).sort();
const text = (dir: string) =>
  segments(dir)
    .map((s) => fs.readFileSync(path.join(dir, s), 'utf8'))
    .join('');

describe('AuditJournal', () => {
  it('gives back, after a crash, exactly the events no insert marked stored, and removes what it read', () => {
    const dir = tempDir();
    const { journal, leftovers } = AuditJournal.open(dir);
    expect(leftovers).toEqual([]);
    const seqs = [1, 2, 3, 4].map((n) => journal.append(event(n)));
    journal.stored([seqs[0], seqs[2]]);
    expect(journal.unstored).toBe(2);
    // the process dies here: nothing is closed

    const again = AuditJournal.open(dir);
    expect(again.leftovers.map((l) => l.event)).toEqual([event(2), event(4)]);
    // the earlier segment is gone; the two are journaled again, in the new one, until stored
    expect(segments(dir)).toEqual(['00000002.log']);
    expect(again.journal.unstored).toBe(2);
    expect(AuditJournal.open(dir).leftovers.map((l) => l.event)).toEqual([event(2), event(4)]);
  });

  it('skips a line cut short by a crash while it was written', () => {
    const dir = tempDir();
    const { journal } = AuditJournal.open(dir);
    journal.append(event(1));
    fs.appendFileSync(path.join(dir, segments(dir)[0]), 'E2 {"type":"delegation.exch');
    expect(AuditJournal.open(dir).leftovers.map((l) => l.event)).toEqual([event(1)]);
  });

  it('empties its file once every event is stored, and then writes from its start', () => {
    const dir = tempDir();
    const { journal } = AuditJournal.open(dir);
    const a = journal.append(event(1));
    const b = journal.append(event(2));
    journal.stored([a]);
    expect(fs.statSync(path.join(dir, segments(dir)[0])).size).toBeGreaterThan(0);
    journal.stored([b]);
    expect(fs.statSync(path.join(dir, segments(dir)[0])).size).toBe(0);
    journal.append(event(3));
    expect(text(dir)).toMatch(/^E3 \{"type":"delegation\.exchanged"/);
    expect(AuditJournal.open(dir).leftovers.map((l) => l.event)).toEqual([event(3)]);
  });

  it('begins a new segment past its size, and removes old ones in order once all their events are stored', () => {
    const dir = tempDir();
    // about two events a segment
    const { journal } = AuditJournal.open(dir, { segmentBytes: 300 });
    const seqs = Array.from({ length: 7 }, (_, i) => journal.append(event(i + 1)));
    expect(segments(dir).length).toBeGreaterThanOrEqual(3);
    const before = segments(dir);
    // all but the first stored: the first segment holds it, and every later one is kept behind it, since a
    // later segment holds the stored marks of its events
    journal.stored(seqs.slice(1));
    expect(segments(dir)).toEqual(before);
    expect(AuditJournal.open(dir).leftovers.map((l) => l.event)).toEqual([event(1)]);
  });

  it('removes the segments once their last event is stored', () => {
    const dir = tempDir();
    const { journal } = AuditJournal.open(dir, { segmentBytes: 300 });
    const seqs = Array.from({ length: 7 }, (_, i) => journal.append(event(i + 1)));
    journal.stored(seqs.slice(1));
    journal.stored([seqs[0]]);
    expect(segments(dir)).toHaveLength(1);
    expect(text(dir)).toBe('');
    expect(AuditJournal.open(dir).leftovers).toEqual([]);
  });

  it('refuses to write once closed, and what it held is given back at the next open', () => {
    const dir = tempDir();
    const { journal } = AuditJournal.open(dir);
    journal.append(event(1));
    journal.close();
    expect(() => journal.append(event(2))).toThrow('the audit journal is closed');
    expect(() => journal.stored([1])).toThrow('the audit journal is closed');
    expect(AuditJournal.open(dir).leftovers.map((l) => l.event)).toEqual([event(1)]);
  });

  it('keeps its files to the operator (mode 0600 in a 0700 folder)', () => {
    const dir = tempDir();
    AuditJournal.open(dir).journal.append(event(1));
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dir, segments(dir)[0])).mode & 0o777).toBe(0o600);
  });
});

/** A database that keeps what it is given, and refuses while `down`; `hold` delays each insert until released. */
function fakeDb() {
  const stored: Record<string, unknown>[] = [];
  const state = { down: false, held: [] as (() => void)[], hold: false };
  const query: Queryable['query'] = async (text, params) => {
    if (state.hold) await new Promise<void>((r) => state.held.push(r));
    if (state.down) throw new Error('connection refused');
    if (/^\s*INSERT INTO audit_events/.test(text))
      stored.push(...(JSON.parse(params![0] as string) as Record<string, unknown>[]));
    if (/^\s*SELECT \* FROM audit_events/.test(text))
      return stored.map((r, i) => ({ id: String(i + 1), at: new Date(), ...r })) as never;
    return [];
  };
  return { db: { query, schema: 'test' } as unknown as Db, stored, state };
}

describe('AuditLog with a journal', () => {
  it('returns once the event is journaled, stores it after, and list() includes it', async () => {
    const journalDir = tempDir();
    const { db, stored, state } = fakeDb();
    const audit = new AuditLog(db, capturingLogger().logger, { retentionDays: 1, journalDir });
    state.hold = true;
    await audit.record(event(1));
    // answered while the insert waits: the event is in the journal, not yet in the table
    expect(stored).toEqual([]);
    expect(text(journalDir)).toContain('"subject":"sub_1"');
    const listed = audit.list({ limit: 10 });
    state.hold = false;
    state.held.splice(0).forEach((release) => release());
    expect((await listed).map((e) => e.subject)).toEqual(['sub_1']);
    expect(stored).toHaveLength(1);
    // stored: nothing is left to give back
    expect(AuditJournal.open(journalDir).leftovers).toEqual([]);
  });

  it('stores at the next start what a stopped process journaled and could not store', async () => {
    const journalDir = tempDir();
    const first = fakeDb();
    first.state.down = true;
    const { logger, lines } = capturingLogger();
    const audit = new AuditLog(first.db, logger, { retentionDays: 1, retryMs: 60000, journalDir });
    await audit.record(event(1));
    await audit.record(event(2));
    await audit.stop();
    expect(first.stored).toEqual([]);
    expect(lines.filter((l) => l.message === 'audit event not stored').map((l) => l.journaled)).toEqual([true, true]);

    const second = fakeDb();
    const next = new AuditLog(second.db, logger, { retentionDays: 1, retryMs: 60000, journalDir });
    next.start();
    expect((await next.list({ limit: 10 })).map((e) => e.subject)).toEqual(['sub_1', 'sub_2']);
    expect(second.stored.map((r) => r.subject)).toEqual(['sub_1', 'sub_2']);
    await next.stop();
    // and only once
    const third = fakeDb();
    const last = new AuditLog(third.db, logger, { retentionDays: 1, journalDir });
    last.start();
    await last.stop();
    expect(third.stored).toEqual([]);
  });

  it('waits for its own insert again once maxAhead inserts are under way', async () => {
    const { db, stored, state } = fakeDb();
    const audit = new AuditLog(db, capturingLogger().logger, { retentionDays: 1, journalDir: tempDir(), maxAhead: 2 });
    state.hold = true;
    await audit.record(event(1));
    await audit.record(event(2));
    let third = false;
    const recorded = audit.record(event(3)).then(() => (third = true));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(third).toBe(false);
    state.hold = false;
    // release the inserts as they come (the first batch holds the earlier events, the next the third)
    while (!third) {
      state.held.splice(0).forEach((release) => release());
      await new Promise((r) => setImmediate(r));
    }
    await recorded;
    expect(stored.map((r) => r.subject)).toEqual(['sub_1', 'sub_2', 'sub_3']);
  });

  it('without a journal, record still returns only once the event is stored', async () => {
    const { db, stored, state } = fakeDb();
    const audit = new AuditLog(db, capturingLogger().logger, { retentionDays: 1 });
    state.hold = true;
    let done = false;
    const recorded = audit.record(event(1)).then(() => (done = true));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    state.hold = false;
    state.held.splice(0).forEach((release) => release());
    await recorded;
    expect(stored.map((r) => r.subject)).toEqual(['sub_1']);
  });
});
