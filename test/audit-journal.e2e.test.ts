import fs from 'node:fs';
import path from 'node:path';
import { manage, stackEnv, startStack } from './support';

interface Listed {
  events: { type: string; subject: string | null; detail: Record<string, unknown> }[];
}

const PASSWORD = 'correct horse battery staple';

/** The identity trail's events of one type, through `pnpm manage audit list` (the admin API). */
async function listed(env: NodeJS.ProcessEnv, type: string): Promise<Listed['events']> {
  const out = await manage(['audit', 'list', '--service', 'identity', '--type', type, '--limit', '100'], env);
  expect(out.code).toBe(0);
  return (JSON.parse(out.stdout) as Listed).events;
}

describe('pnpm start: the audit journal of the embedded database', () => {
  it('stores at start what an earlier program journaled and did not store, once, and loses nothing to a SIGKILL', async () => {
    const env = await stackEnv();
    const journal = path.join(env.DATA_DIR!, 'audit-journal', 'identity');
    // what a program killed after answering, before its insert, leaves: an event no line marks stored
    fs.mkdirSync(journal, { recursive: true, mode: 0o700 });
    const orphan = {
      type: 'user.disabled',
      actor: { type: 'operator', id: 'admin', requestId: 'req-before-the-crash', clientAddress: '127.0.0.1' },
      subject: 'usr_journaled',
      detail: { reason: 'journaled before a crash' },
    };
    fs.writeFileSync(path.join(journal, '00000007.log'), `E1 ${JSON.stringify(orphan)}\nE2 {"type":"user.dis`, {
      mode: 0o600,
    });

    const first = await startStack(env);
    let userId = '';
    try {
      expect(first.output()).not.toContain('audit event not stored');
      const stored = await listed(env, 'user.disabled');
      expect(stored.map((e) => [e.subject, e.detail])).toEqual([['usr_journaled', orphan.detail]]);
      // the earlier segment is gone; what this program journals lives in the next one, emptied once stored
      expect(fs.readdirSync(journal)).toEqual(['00000008.log']);
      expect(fs.statSync(path.join(journal, '00000008.log')).mode & 0o777).toBe(0o600);

      const created = await manage(
        ['user', 'create', '--username', 'journal-alice', '--password', PASSWORD, '--verification-level', 'device'],
        env,
      );
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
      userId = (JSON.parse(created.stdout) as { user_id: string }).user_id;
      // answered: then killed at once, with no chance to stop in order
    } finally {
      first.child.kill('SIGKILL');
      await new Promise((r) => first.child.once('exit', r));
    }

    const second = await startStack(env);
    try {
      // every event exactly once: the one stored before the kill is not stored again, nor is the orphan
      expect((await listed(env, 'user.disabled')).map((e) => e.subject)).toEqual(['usr_journaled']);
      const users = await listed(env, 'user.created');
      expect(users.map((e) => [e.subject, e.detail.username])).toEqual([[userId, 'journal-alice']]);
    } finally {
      expect((await second.stop('SIGTERM')).code).toBe(0);
    }
  }, 180000);
});
