import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { createBus, RedisCache } from '@attest/common';
import { testLogger } from '@attest/testing';
import {
  ADMIN_TOKEN,
  basic,
  browserFlow,
  callbackParams,
  createUser,
  hidden,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

/**
 * Issue 23 (trust review), items 7, 8 and 11: what ends a session, a consent or a signing key also
 * ends the access tokens issued under it, at /introspect and /userinfo, on every replica.
 */
type Agent = ReturnType<typeof request.agent>;
type App = { app_id: string; client_secret: string };

/** An app backend that records the back-channel logout tokens it receives. */
function receiver() {
  const tokens: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      tokens.push(new URLSearchParams(body).get('logout_token') ?? '');
      res.end();
    });
  });
  return { server, tokens };
}

async function waitFor(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition not reached');
}

const admin = (h: IdentityHarness, method: 'get' | 'post' | 'delete', path: string) =>
  request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
const userinfo = (h: IdentityHarness, token: string) =>
  request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${token}`);
const introspect = (h: IdentityHarness, a: App, token: string) =>
  request(h.publicApp)
    .post('/introspect')
    .set('Authorization', basic(a.app_id, a.client_secret))
    .type('form')
    .send({ token });
const query = (a: App, extra: Record<string, string> = {}) => ({
  response_type: 'code',
  scope: 'openid profile',
  client_id: a.app_id,
  redirect_uri: REDIRECT_URI,
  state: 's',
  nonce: 'n',
  ...extra,
});

/** Signs in to the app in `agent` (a browser) and exchanges the code: the app's access token. */
async function tokenFor(
  h: IdentityHarness,
  a: App,
  user: { username: string; password: string },
  agent: Agent = request.agent(h.publicApp),
): Promise<{ agent: Agent; access: string }> {
  const { code } = callbackParams(await browserFlow(agent, query(a), user));
  const res = await request(h.publicApp)
    .post('/token')
    .set('Authorization', basic(a.app_id, a.client_secret))
    .type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
  expect(res.status).toBe(200);
  return { agent, access: res.body.access_token as string };
}

/** Whether the token still works: active at /introspect and 200 at /userinfo (both must agree). */
async function works(h: IdentityHarness, a: App, token: string): Promise<boolean> {
  const [i, u] = await Promise.all([introspect(h, a, token), userinfo(h, token)]);
  expect(i.status).toBe(200);
  expect([i.body.active, u.status]).toEqual(i.body.active ? [true, 200] : [false, 401]);
  return i.body.active as boolean;
}

describe('trust review: ending sessions, consents and keys ends their tokens', () => {
  let h: IdentityHarness;
  let app: App;
  const rx = receiver();

  beforeAll(async () => {
    await new Promise<void>((r) => rx.server.listen(0, '127.0.0.1', r));
    h = await identityHarness();
    const created = await admin(h, 'post', '/admin/apps').send({
      name: 'Trust app',
      redirect_uris: [REDIRECT_URI],
      backchannel_logout_uri: `http://127.0.0.1:${(rx.server.address() as AddressInfo).port}/bcl`,
    });
    expect(created.status).toBe(201);
    app = created.body as App;
  });
  afterAll(async () => {
    await h.close();
    await new Promise((r) => rx.server.close(r));
  });

  async function onAccountPage(user: { username: string; password: string }) {
    const agent = request.agent(h.publicApp);
    const signin = await agent.get('/signin?next=account');
    const posted = await agent
      .post('/signin')
      .type('form')
      .send({ next: 'account', csrf: hidden(signin.text, 'csrf'), username: user.username, password: user.password });
    expect(posted.headers.location).toBe('/account');
    return { agent, page: await agent.get('/account') };
  }
  const silent = async (agent: Agent) =>
    callbackParams(await agent.get('/authorize').query(query(app, { prompt: 'none' })));

  it('access tokens name their session (the sid of the app’s id_token)', async () => {
    const user = await createUser(h);
    const agent = request.agent(h.publicApp);
    const { code } = callbackParams(await browserFlow(agent, query(app), user));
    const res = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    const access = jwt.decode(res.body.access_token as string) as Record<string, unknown>;
    const id = jwt.decode(res.body.id_token as string) as Record<string, unknown>;
    expect(access.sid).toEqual(id.sid);
    expect(access.sid).toMatch(/^[0-9a-f]+$/);
  });

  it('a password change on the account page ends the other sessions (back-channel logout) and their tokens; this browser stays', async () => {
    const user = await createUser(h);
    const other = await tokenFor(h, app, user);
    const { agent, page } = await onAccountPage(user);
    const mine = await tokenFor(h, app, user, agent);
    expect(await works(h, app, other.access)).toBe(true);
    rx.tokens.length = 0;

    const changed = await agent
      .post('/account/password')
      .type('form')
      .send({
        csrf: hidden(page.text, 'csrf'),
        current_password: user.password,
        new_password: 'another good password',
        confirm_password: 'another good password',
      });
    expect(changed.status).toBe(303);
    expect(await silent(other.agent)).toMatchObject({ error: 'login_required' });
    expect(await works(h, app, other.access)).toBe(false);
    await waitFor(() => rx.tokens.length === 1);
    const [session] = await h.ctx.tokens.sessions.listForUser(user.user_id);
    expect((await h.ctx.tokens.sessions.listForUser(user.user_id)).length).toBe(1);
    expect((jwt.decode(rx.tokens[0]) as Record<string, unknown>).sid).toBe(
      (jwt.decode(other.access) as Record<string, unknown>).sid,
    );
    expect(session).toBeDefined();
    expect((await agent.get('/account')).status).toBe(200);
    expect(await works(h, app, mine.access)).toBe(true);
  });

  it('an operator’s password reset ends every session of the user and their tokens', async () => {
    const user = await createUser(h);
    const one = await tokenFor(h, app, user);
    const two = await tokenFor(h, app, user);
    expect(await works(h, app, one.access)).toBe(true);
    await admin(h, 'post', `/admin/users/${user.user_id}/reset-password`).send({}).expect(200);
    expect(await h.ctx.tokens.sessions.listForUser(user.user_id)).toEqual([]);
    expect(await works(h, app, one.access)).toBe(false);
    expect(await works(h, app, two.access)).toBe(false);
    expect(await silent(one.agent)).toMatchObject({ error: 'login_required' });
  });

  it('ending a session (account page, operator) makes the tokens issued in it inactive, and only those', async () => {
    const user = await createUser(h);
    const phone = await tokenFor(h, app, user);
    const laptop = await tokenFor(h, app, user);
    const { agent, page } = await onAccountPage(user);
    // the session the phone's token names (its sid is the app's pairwise sid of that session)
    const { pairwiseSid } = await import('../src/kernel/ids');
    const sidOf = (token: string) => (jwt.decode(token) as Record<string, unknown>).sid;
    const phoneSession = (await h.ctx.tokens.sessions.listForUser(user.user_id)).find(
      (s) => pairwiseSid(h.config.secret, app.app_id, s.id) === sidOf(phone.access),
    )!;
    expect(page.text).toContain(`data-session-id="${phoneSession.id}"`);

    const res = await agent
      .post('/account/sessions/end')
      .type('form')
      .send({ csrf: hidden(page.text, 'csrf'), session_id: phoneSession.id });
    expect(res.status).toBe(303);
    expect(await works(h, app, phone.access)).toBe(false);
    expect(await works(h, app, laptop.access)).toBe(true);

    const [rest] = (await h.ctx.tokens.sessions.listForUser(user.user_id)).filter((s) => s.clientIds.length);
    await admin(h, 'delete', `/admin/users/${user.user_id}/sessions/${rest.id}`).expect(204);
    expect(await works(h, app, laptop.access)).toBe(false);
  });

  it('signing out at /logout (the app’s id_token as hint) makes the tokens of that session inactive', async () => {
    const user = await createUser(h);
    const agent = request.agent(h.publicApp);
    const { code } = callbackParams(await browserFlow(agent, query(app), user));
    const res = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    const access = res.body.access_token as string;
    expect(await works(h, app, access)).toBe(true);
    const out = await agent.get('/logout').query({ id_token_hint: res.body.id_token as string });
    expect(out.text).toContain('You are signed out');
    expect(await works(h, app, access)).toBe(false);
  });

  it('a disabled user’s tokens stay inactive once the user is enabled again (their sessions ended)', async () => {
    const user = await createUser(h);
    const { access } = await tokenFor(h, app, user);
    expect(await works(h, app, access)).toBe(true);
    await admin(h, 'post', `/admin/users/${user.user_id}/disable`).expect(200);
    expect(await works(h, app, access)).toBe(false);
    await admin(h, 'post', `/admin/users/${user.user_id}/enable`).expect(200);
    expect(await works(h, app, access)).toBe(false);
    // durable: a restart (a fresh set loaded from Postgres) still refuses it
    const fresh = new (await import('../src/kernel/revocations')).Revocations(
      (await import('../src/kernel/revocation-store')).revocationStore(h.storage.db),
      h.storage.bus,
      testLogger,
    );
    await fresh.start();
    const sid = (jwt.decode(access) as Record<string, string>).sid;
    expect(await fresh.isRevoked('unrelated', sid)).toBe(true);
    fresh.stop();
  });

  it('approving an app again after a withdrawal does not revive its older tokens (account page and operator)', async () => {
    const user = await createUser(h);
    const first = await tokenFor(h, app, user);
    const { agent, page } = await onAccountPage(user);
    const withdrawn = await agent
      .post('/account/consents/withdraw')
      .type('form')
      .send({ csrf: hidden(page.text, 'csrf'), app_id: app.app_id });
    expect(withdrawn.status).toBe(303);
    expect(await works(h, app, first.access)).toBe(false);

    // the same browser approves again at once: a new token works, the old one stays inactive
    const again = await tokenFor(h, app, user, first.agent);
    expect(await works(h, app, again.access)).toBe(true);
    expect(await works(h, app, first.access)).toBe(false);

    await admin(h, 'delete', `/admin/users/${user.user_id}/consents/${app.app_id}`).expect(204);
    const third = await tokenFor(h, app, user, first.agent);
    expect(await works(h, app, third.access)).toBe(true);
    expect(await works(h, app, again.access)).toBe(false);
    // durable: the withdrawal is in Postgres until the tokens it stopped have expired
    const rows = await h.storage.db.query<{ key: string }>('SELECT key FROM revoked_before WHERE key LIKE $1', [
      `consent:${user.user_id}:%`,
    ]);
    expect(rows).toEqual([{ key: `consent:${user.user_id}:${app.app_id}` }]);
  });

  it('emergency rotation: the old key leaves the JWKS at once, its tokens (already verified and cached) are inactive, audited', async () => {
    const user = await createUser(h);
    const { access, agent } = await tokenFor(h, app, user);
    expect(await works(h, app, access)).toBe(true); // verified once: now in the cache of verified tokens
    const oldKid = jwt.decode(access, { complete: true })!.header.kid!;

    const refused = await admin(h, 'post', '/admin/keys/rotate').send({ revoke_previous: 'yes' });
    expect(refused.status).toBe(400);
    const rotated = await admin(h, 'post', '/admin/keys/rotate').send({ revoke_previous: true });
    expect(rotated.status).toBe(200);
    expect(rotated.body.retired).toBe(oldKid);
    expect(rotated.body.revoked).toContain(oldKid);

    // every algorithm's key is replaced at once (issue 40, item 2: a key per advertised algorithm): the new
    // RS256 key and one new PS256 and ES256 key are published, none of the revoked ones
    const jwks = await request(h.publicApp).get('/jwks.json');
    const published = jwks.body.keys as { kid: string; alg: string }[];
    expect(published.map((k) => k.alg).sort()).toEqual(['ES256', 'PS256', 'RS256']);
    expect(published.find((k) => k.alg === 'RS256')!.kid).toBe(rotated.body.kid);
    for (const kid of rotated.body.revoked as string[]) expect(published.map((k) => k.kid)).not.toContain(kid);
    expect(((await admin(h, 'get', '/admin/keys')).body.keys as { kid: string }[]).map((k) => k.kid).sort()).toEqual(
      published.map((k) => k.kid).sort(),
    );
    expect(await works(h, app, access)).toBe(false);
    const audited = async (type: string) =>
      ((await admin(h, 'get', `/admin/audit?type=${type}&limit=1000`)).body.events as Record<string, unknown>[]).find(
        (e) => e.subject === (type === 'signing_key.revoked' ? oldKid : rotated.body.kid),
      );
    // every algorithm's previous key is revoked with it (a key per advertised algorithm, issue 40 item 2)
    const rotatedEvent = await audited('signing_key.rotated');
    expect(rotatedEvent).toMatchObject({ detail: { retired: oldKid } });
    expect((rotatedEvent!.detail as { revoked: string[] }).revoked).toContain(oldKid);
    expect((rotatedEvent!.detail as { revoked: string[] }).revoked).toEqual(rotated.body.revoked);
    expect(await audited('signing_key.revoked')).toMatchObject({ detail: { replaced_by: rotated.body.kid } });

    // a new sign-in is signed with the new key and works
    const fresh = await tokenFor(h, app, user, agent);
    expect(jwt.decode(fresh.access, { complete: true })!.header.kid).toBe(rotated.body.kid);
    expect(await works(h, app, fresh.access)).toBe(true);
  });
});

const redisUrl = process.env.TEST_REDIS_URL;

/** Two instances over one Postgres schema and one Redis (as replicas): the revocations reach the other at once. */
(redisUrl ? describe : describe.skip)('trust review: two replicas', () => {
  let one: IdentityHarness;
  let two: IdentityHarness;
  let app: App;

  beforeAll(async () => {
    const prefix = `test:identity:${randomBytes(5).toString('hex')}:`;
    const shared = () => ({
      cache: new RedisCache(redisUrl!, prefix, testLogger),
      bus: createBus(redisUrl, prefix, testLogger),
    });
    one = await identityHarness({}, shared());
    two = await identityHarness({}, { ...shared(), db: one.storage.db });
    for (let i = 0; i < 100 && !(one.storage.bus.connected && two.storage.bus.connected); i++)
      await new Promise((r) => setTimeout(r, 20));
    app = (await admin(one, 'post', '/admin/apps').send({ name: 'Replica app', redirect_uris: [REDIRECT_URI] }))
      .body as App;
  });
  afterAll(async () => {
    await two.close();
    await one.close();
  });

  it('a session ended on one replica: its tokens are inactive on the other', async () => {
    const user = await createUser(one);
    const { access } = await tokenFor(two, app, user);
    expect(await works(two, app, access)).toBe(true);
    await admin(one, 'delete', `/admin/users/${user.user_id}/sessions`).expect(200);
    await waitFor(async () => !(await works(two, app, access)));
  });

  it('an emergency rotation on one replica: the other refuses the old key’s tokens it had verified', async () => {
    const user = await createUser(one);
    const { access } = await tokenFor(two, app, user);
    expect(await works(two, app, access)).toBe(true);
    const rotated = await admin(one, 'post', '/admin/keys/rotate').send({ revoke_previous: true });
    expect(rotated.status).toBe(200);
    await waitFor(async () => !(await works(two, app, access)));
    // the other replica publishes the new key set (a key per advertised algorithm), none of the revoked keys
    const jwks = await request(two.publicApp).get('/jwks.json');
    const published = jwks.body.keys as { kid: string; alg: string }[];
    expect(published.map((k) => k.alg).sort()).toEqual(['ES256', 'PS256', 'RS256']);
    expect(published.find((k) => k.alg === 'RS256')!.kid).toBe(rotated.body.kid);
    for (const kid of rotated.body.revoked as string[]) expect(published.map((k) => k.kid)).not.toContain(kid);
  });
});
