import request from 'supertest';
import type { StoredAuditEvent } from '@attest/common';
import { hmacHex } from '../src/kernel/crypto';
import {
  browserFlow,
  createApp,
  createUser,
  hidden,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';
import { softAuthenticator } from './soft-authenticator';

const authorizeQuery = (clientId: string) => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: REDIRECT_URI,
  scope: 'openid profile',
  state: 's',
});

const optionsOf = (page: string) =>
  JSON.parse(/data-options="([^"]+)"/.exec(page)![1].replace(/&quot;/g, '"')) as { challenge: string };
const ceremonyOf = (page: string) => /name="ceremony" value="([0-9a-f]{64})"/.exec(page)![1];

describe('the audit trail of the account page, sign-up and failed sign-ins (issue 23, item 17)', () => {
  let h: IdentityHarness;
  let app: { app_id: string };
  const rp = { id: 'localhost', origin: 'http://localhost:4000' };

  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h, [REDIRECT_URI], 'Audit test app');
  });
  afterAll(() => h.close());

  const events = async (type: string, subject: string | null): Promise<StoredAuditEvent[]> =>
    (await h.ctx.kernel.audit.list({ types: [type], limit: 1000 })).filter((e) => e.subject === subject);

  async function signedIn(user: { username: string; password: string }) {
    const agent = request.agent(h.publicApp);
    const page = await agent.get('/signin?next=account');
    await agent
      .post('/signin')
      .type('form')
      .send({ next: 'account', csrf: hidden(page.text, 'csrf'), username: user.username, password: user.password });
    const account = await agent.get('/account');
    expect(account.status).toBe(200);
    return { agent, account: account.text, csrf: hidden(account.text, 'csrf') };
  }

  it('password change, passkey added and removed, consent withdrawn, sessions ended: each stored with the user as actor', async () => {
    const user = await createUser(h);
    // an approved app, to withdraw
    await browserFlow(request.agent(h.publicApp), authorizeQuery(app.app_id), user);
    const other = await signedIn(user);
    const { agent, account, csrf } = await signedIn(user);

    const device = softAuthenticator(rp);
    const added = await agent
      .post('/account/passkeys')
      .type('form')
      .send({
        csrf,
        ceremony: ceremonyOf(account),
        name: 'Laptop',
        credential: JSON.stringify(device.register(optionsOf(account).challenge)),
      });
    expect(added.headers.location).toBe('/account?notice=passkey-added');
    const [addedEvent] = await events('passkey.added', user.user_id);
    expect(addedEvent).toMatchObject({
      actorType: 'user',
      actor: user.user_id,
      detail: { name: 'Laptop', user_verified: true },
    });
    expect(addedEvent.clientAddress).toBeTruthy();

    const removed = await agent.post('/account/passkeys/remove').type('form').send({ csrf, passkey_id: device.id });
    expect(removed.headers.location).toBe('/account?notice=passkey-removed');
    expect(await events('passkey.removed', user.user_id)).toEqual([
      expect.objectContaining({ actorType: 'user', actor: user.user_id, detail: { passkey_id: device.id } }),
    ]);

    const withdrawn = await agent.post('/account/consents/withdraw').type('form').send({ csrf, app_id: app.app_id });
    expect(withdrawn.headers.location).toBe('/account?notice=withdrawn');
    expect(await events('consent.withdrawn', user.user_id)).toEqual([
      expect.objectContaining({ actorType: 'user', actor: user.user_id, detail: { app_id: app.app_id } }),
    ]);

    // most recently used first: the last one is the browser that approved the app, not this one
    const sessions = await h.ctx.tokens.sessions.listForUser(user.user_id);
    const otherId = sessions[sessions.length - 1].id;
    const ended = await agent.post('/account/sessions/end').type('form').send({ csrf, session_id: otherId });
    expect(ended.headers.location).toBe('/account?notice=session-ended');
    expect(await events('session.ended', user.user_id)).toEqual([
      expect.objectContaining({
        actorType: 'user',
        actor: user.user_id,
        detail: { session_id: otherId, current: false },
      }),
    ]);
    const endedOthers = await agent.post('/account/sessions/end-others').type('form').send({ csrf });
    expect(endedOthers.headers.location).toBe('/account?notice=sessions-ended');
    expect((await events('session.ended', user.user_id)).map((e) => e.detail)).toContainEqual({
      others: true,
      count: 1,
    });
    await other.agent.get('/account').expect(302);

    const changed = await agent.post('/account/password').type('form').send({
      csrf,
      current_password: user.password,
      new_password: 'an uncommon new passphrase',
      confirm_password: 'an uncommon new passphrase',
    });
    expect(changed.headers.location).toBe('/account?notice=password-changed');
    const [passwordEvent] = await events('password.changed', user.user_id);
    expect(passwordEvent).toMatchObject({ actorType: 'user', actor: user.user_id });
    expect(JSON.stringify(passwordEvent)).not.toContain('uncommon new passphrase');
    expect(JSON.stringify(passwordEvent)).not.toContain(user.password);
  });

  it('a passkey sign-up is stored as user.signed_up', async () => {
    const agent = request.agent(h.publicApp);
    const start = await agent.get('/authorize').query(authorizeQuery(app.app_id));
    const page = await agent.get(start.headers.location as string);
    const interaction = hidden(page.text, 'interaction');
    const csrf = hidden(page.text, 'csrf');
    const username = `signup-${Date.now()}`;
    const step2 = await agent.post('/signup').type('form').send({ interaction, csrf, step: 'details', username });
    expect(step2.status).toBe(200);
    const device = softAuthenticator(rp);
    const done = await agent
      .post('/signup')
      .type('form')
      .send({
        interaction,
        csrf,
        step: 'passkey',
        ceremony: ceremonyOf(step2.text),
        credential: JSON.stringify(device.register(optionsOf(step2.text).challenge)),
      });
    expect(done.status).toBe(303);
    const user = await h.ctx.kernel.users.findByUsername(username);
    expect(user).not.toBeNull();
    expect(await events('user.signed_up', user!.id)).toEqual([
      expect.objectContaining({
        actorType: 'user',
        actor: user!.id,
        detail: { method: 'passkey', username, app_id: app.app_id, user_verified: true },
      }),
    ]);
  });

  it('a failed sign-in with an unknown username stores its keyed hash, never the typed text', async () => {
    const typed = `My$ecretPassw0rd-${Date.now()}`;
    const agent = request.agent(h.publicApp);
    const page = await agent.get('/signin?next=account');
    const res = await agent
      .post('/signin')
      .type('form')
      .send({ next: 'account', csrf: hidden(page.text, 'csrf'), username: typed, password: 'whatever it is' });
    expect(res.status).toBe(400);
    const failed = (await h.ctx.kernel.audit.list({ types: ['signin.failed'], limit: 1000 })).filter(
      (e) => e.detail.reason === 'unknown_username',
    );
    const mine = failed.filter((e) => e.detail.username_hash === hmacHex(h.config.secret, `audit-username:${typed}`));
    expect(mine).toHaveLength(1);
    expect(mine[0].detail).not.toHaveProperty('username');
    const all = JSON.stringify(await h.ctx.kernel.audit.list({ limit: 1000 }));
    expect(all).not.toContain(typed);

    // a known user's failure still names the username (it is theirs, not a typed secret)
    const user = await createUser(h);
    await agent
      .post('/signin')
      .type('form')
      .send({ next: 'account', csrf: hidden(page.text, 'csrf'), username: user.username, password: 'wrong one' });
    expect((await events('signin.failed', user.user_id))[0].detail).toMatchObject({
      username: user.username,
      reason: 'wrong_password',
    });
  });
});
