import { AuditLog, type AuditEvent, type Db, type Queryable } from '../src';
import { capturingLogger } from './support';

/** A database whose inserts fail while `down` is set, and that keeps what it took. */
function flakyDb() {
  const stored: unknown[][] = [];
  const state = { down: true };
  const query: Queryable['query'] = async (_text, params) => {
    if (state.down) throw new Error('connection refused');
    stored.push(params ?? []);
    return [];
  };
  return { db: { query, schema: 'test' } as unknown as Db, stored, state };
}

/** The events of one insert: its one parameter, a JSON array of rows. */
const rows = (params: unknown[]) => JSON.parse(params[0] as string) as Record<string, unknown>[];
const row = (subject: string, detail: Record<string, unknown> = {}) => ({
  type: 'user.disabled',
  actor_type: 'operator',
  actor: 'alice',
  subject,
  request_id: null,
  client_address: null,
  detail,
});

const event = (n: number): AuditEvent => ({
  type: 'user.disabled',
  actor: { type: 'operator', id: 'alice' },
  subject: `usr_${n}`,
});

describe('AuditLog when the database refuses an event', () => {
  it('never fails the caller, keeps the event and stores it on a retry', async () => {
    const { db, stored, state } = flakyDb();
    const { logger, lines } = capturingLogger();
    const audit = new AuditLog(db, logger, { retentionDays: 1, retryMs: 60000 });
    await expect(audit.record(event(1))).resolves.toBeUndefined();
    expect(audit.backlog).toBe(1);
    expect(lines.some((l) => l.message === 'audit event not stored yet; retrying')).toBe(true);
    expect(await audit.flush()).toBe(false);
    state.down = false;
    expect(await audit.flush()).toBe(true);
    expect(audit.backlog).toBe(0);
    expect(stored).toHaveLength(1);
    // one statement whatever the number of events: one parameter, the events as JSON
    expect(stored[0]).toHaveLength(1);
    expect(rows(stored[0])).toEqual([row('usr_1')]);
    await audit.stop();
  });

  it('records several events in one statement, and keeps each of them when the database refuses it', async () => {
    const { db, stored, state } = flakyDb();
    const { logger } = capturingLogger();
    const audit = new AuditLog(db, logger, { retentionDays: 1, retryMs: 60000 });
    await audit.record([event(1), event(2)]);
    expect(audit.backlog).toBe(2);
    state.down = false;
    await audit.record([event(3), event(4)]);
    expect(stored.map(rows)).toEqual([[row('usr_3'), row('usr_4')]]);
    expect(await audit.flush()).toBe(true);
    expect(rows(stored[1]).map((r) => r.subject)).toEqual(['usr_1', 'usr_2']);
    await audit.stop();
  });

  it('writes an event it cannot keep to the log in full, and those still pending at shutdown', async () => {
    const { db } = flakyDb();
    const { logger, lines } = capturingLogger();
    const audit = new AuditLog(db, logger, { retentionDays: 1, retryMs: 60000, maxPending: 1 });
    await audit.record(event(1));
    await audit.record(event(2));
    const dropped = () =>
      lines.filter((l) => l.message === 'audit event not stored').map((l) => (l.audit_event as AuditEvent).subject);
    expect(dropped()).toEqual(['usr_2']);
    await audit.stop();
    expect(dropped()).toEqual(['usr_2', 'usr_1']);
  });

  it('keeps every event of a refused batch, and stop() waits for an insert under way before its last attempt', async () => {
    const { db, stored, state } = flakyDb();
    const { logger, lines } = capturingLogger();
    const audit = new AuditLog(db, logger, { retentionDays: 1, retryMs: 60000 });
    // recorded alone at the same time: one batch, refused (and each of them again alone)
    await Promise.all([1, 2, 3].map((n) => audit.record(event(n))));
    expect(audit.backlog).toBe(3);
    expect(lines.filter((l) => l.message === 'audit event not stored yet; retrying')).toHaveLength(3);
    state.down = false;
    // under way when stop() is called: stop() waits for it, then stores the kept three
    const late = audit.record(event(4));
    await audit.stop();
    await late;
    expect(audit.backlog).toBe(0);
    expect(lines.some((l) => l.message === 'audit event not stored')).toBe(false);
    expect(stored.flatMap((params) => rows(params).map((r) => r.subject)).sort()).toEqual([
      'usr_1',
      'usr_2',
      'usr_3',
      'usr_4',
    ]);
  });
});

describe('AuditLog when events are recorded alone at the same time', () => {
  it('inserts them in one statement, in the order they were recorded, and each record resolves once stored', async () => {
    const stored: unknown[][] = [];
    let settle: () => void = () => undefined;
    const query: Queryable['query'] = async (_text, params) => {
      await new Promise<void>((resolve) => (settle = resolve));
      stored.push(params ?? []);
      return [];
    };
    const { logger } = capturingLogger();
    const audit = new AuditLog({ query, schema: 'test' } as unknown as Db, logger, { retentionDays: 1 });
    let resolved = 0;
    const records = [1, 2, 3].map((n) => audit.record({ ...event(n), detail: { n } }).then(() => resolved++));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    // the insert is under way: nobody is told their event is stored yet
    expect(resolved).toBe(0);
    settle();
    await Promise.all(records);
    expect(resolved).toBe(3);
    expect(stored).toHaveLength(1);
    expect(rows(stored[0])).toEqual([row('usr_1', { n: 1 }), row('usr_2', { n: 2 }), row('usr_3', { n: 3 })]);
    await audit.stop();
  });
});
