import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { auditStore, type AuditEvent, type Db } from '../src';
import { testDatabase } from './support';

/**
 * The audit trail's insert is one statement whatever the number of events (each column an array), so
 * that the payment requests created together write their records at once: each event must be stored as
 * given, in its order, whatever its detail holds.
 */
describe('audit store: several events in one statement', () => {
  let db: Db;
  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-audit-'));
    fs.writeFileSync(path.join(dir, '001_init.sql'), '\\include @attest/common/migrations/audit.sql\n');
    db = await testDatabase('audit_store', dir);
  });
  afterAll(() => db.close());

  it('stores each event as given, in order, with its detail intact', async () => {
    const events: AuditEvent[] = [
      {
        type: 'payment_request.created',
        actor: { type: 'app', id: 'key_1', requestId: 'req-1', clientAddress: '203.0.113.7' },
        subject: 'pr_1',
        detail: { reference: 'a "quoted" {braced}, back\\slash', nested: { list: [1, null, 'é'] } },
      },
      { type: 'user.disabled', actor: { type: 'operator', id: null }, detail: {} },
      { type: 'payment_request.created', actor: { type: 'system', id: 'chain' }, subject: 'pr_3' },
    ];
    await auditStore(db).insert(events);
    const stored = await auditStore(db).list({ limit: 10 });
    // newest first
    expect(
      stored.reverse().map((e) => [e.type, e.actorType, e.actor, e.subject, e.requestId, e.clientAddress, e.detail]),
    ).toEqual([
      ['payment_request.created', 'app', 'key_1', 'pr_1', 'req-1', '203.0.113.7', events[0].detail],
      ['user.disabled', 'operator', null, null, null, null, {}],
      ['payment_request.created', 'system', 'chain', 'pr_3', null, null, {}],
    ]);
    expect(Number(stored[0].id) < Number(stored[1].id) && Number(stored[1].id) < Number(stored[2].id)).toBe(true);
  });
});
