import { Writable } from 'node:stream';
import winston from 'winston';
import { AuditLog, type AuditEvent, type Db, type Queryable } from '../src';

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

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return {
    logger: winston.createLogger({
      format: winston.format.json(),
      transports: [new winston.transports.Stream({ stream })],
    }),
    lines,
  };
}

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
    // one statement whatever the number of events: each column an array
    expect(stored[0]).toEqual([['user.disabled'], ['operator'], ['alice'], ['usr_1'], [null], [null], ['{}']]);
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
    expect(stored).toEqual([
      [
        ['user.disabled', 'user.disabled'],
        ['operator', 'operator'],
        ['alice', 'alice'],
        ['usr_3', 'usr_4'],
        [null, null],
        [null, null],
        ['{}', '{}'],
      ],
    ]);
    expect(await audit.flush()).toBe(true);
    expect(stored[1][3]).toEqual(['usr_1', 'usr_2']);
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
});
