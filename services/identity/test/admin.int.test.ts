import request from 'supertest';
import { hmacHex } from '../src/kernel/crypto';
import {
  ADMIN_TOKEN,
  basic,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  hidden,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

const OPS_TOKEN = 'ops-alice-token-0123456789abcdef';

/** The complete identity admin API, and the audit entry each operation leaves. */
describe('identity admin API: apps, users, signing keys, audit', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    h = await identityHarness({ ADMIN_TOKENS: `ops-alice:${OPS_TOKEN}` });
  });
  afterAll(() => h.close());

  const admin = (method: 'get' | 'post' | 'patch' | 'delete', path: string, token = ADMIN_TOKEN) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${token}`);
  const userinfo = (token: string) => request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${token}`);
  const introspect = (a: { app_id: string; client_secret: string }, token: string) =>
    request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(a.app_id, a.client_secret))
      .type('form')
      .send({ token });
  const exchange = (a: { app_id: string; client_secret: string }, code: string) =>
    request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(a.app_id, a.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
  const authorizeQuery = (a: { app_id: string }) => ({
    response_type: 'code',
    scope: 'openid profile',
    client_id: a.app_id,
    redirect_uri: REDIRECT_URI,
  });

  async function signIn(a: { app_id: string; client_secret: string }, u: { username: string; password: string }) {
    const agent = request.agent(h.publicApp);
    const res = await browserFlow(agent, authorizeQuery(a), u);
    const code = callbackParams(res).code;
    const tokens = await exchange(a, code);
    expect(tokens.status).toBe(200);
    return { agent, code, access: tokens.body.access_token as string };
  }

  /** Posts the sign-in form of a fresh authorization request; returns the response. */
  async function submitSignIn(a: { app_id: string }, username: string, password: string) {
    const agent = request.agent(h.publicApp);
    let res = await agent.get('/authorize').query(authorizeQuery(a));
    res = await agent.get(res.headers.location as string);
    return agent
      .post('/signin')
      .type('form')
      .send({ interaction: hidden(res.text, 'interaction'), csrf: hidden(res.text, 'csrf'), username, password });
  }

  interface Entry {
    subject: string | null;
    detail: Record<string, unknown>;
  }
  async function auditOf(type: string, subject?: string): Promise<Entry[]> {
    const res = await admin('get', `/admin/audit?type=${type}&limit=1000`).expect(200);
    return (res.body.events as Entry[]).filter((e) => subject === undefined || e.subject === subject);
  }

  describe('apps', () => {
    it('lists apps in pages with a cursor, shows one, and never shows a secret', async () => {
      const made = [
        await createApp(h, [REDIRECT_URI], 'Page A'),
        await createApp(h, [REDIRECT_URI], 'Page B'),
        await createApp(h, [REDIRECT_URI], 'Page C'),
      ];
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: request.Response = await admin(
          'get',
          `/admin/apps?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        ).expect(200);
        expect(page.body.apps.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.apps.map((a: { app_id: string }) => a.app_id));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual(expect.arrayContaining(made.map((m) => m.app_id)));
      expect(new Set(seen).size).toBe(seen.length);
      const one = await admin('get', `/admin/apps/${made[1].app_id}`).expect(200);
      expect(one.body).toEqual({
        app_id: made[1].app_id,
        name: 'Page B',
        registration: 'operator',
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'client_secret_basic',
        web_origins: [],
        post_logout_redirect_uris: [],
        backchannel_logout_uri: null,
        jwks: null,
        jwks_uri: null,
        require_pushed_authorization_requests: false,
        id_token_signed_response_alg: 'RS256',
        // issue 40, item 5: a new setting, RS256 outside the fapi2 profile
        access_token_signed_response_alg: 'RS256',
        dpop_bound_access_tokens: false,
        min_verification_level: null,
        // issue 41: the device flow, off unless enabled
        device_authorization_grant: false,
        profile: 'none',
        // issue 42: no CIBA unless the operator sets a mode
        backchannel_token_delivery_mode: null,
        backchannel_client_notification_endpoint: null,
        // issue 42: the operator's leave to act for people (token exchange), off unless given
        may_act_for_users: false,
        created_at: expect.any(String),
        disabled: false,
        disabled_at: null,
      });
      expect(JSON.stringify(one.body)).not.toMatch(/sk_|"client_secret"|secret_hash/);
      expect((await admin('get', '/admin/apps/app_00000000000000000000000000000000')).body).toMatchObject({
        code: 'not_found',
        attribute: 'app_id',
      });
      expect((await admin('get', '/admin/apps?limit=0')).body).toMatchObject({
        code: 'invalid_parameter',
        attribute: 'limit',
      });
      expect((await admin('get', '/admin/apps?cursor=nope')).body).toMatchObject({
        code: 'invalid_parameter',
        attribute: 'cursor',
      });
    });

    it('updates the name and redirect URIs: the old redirect URI is refused at once, and the change is audited', async () => {
      const a = await createApp(h);
      const u = await createUser(h);
      await signIn(a, u); // warms the app cache
      const res = await admin('patch', `/admin/apps/${a.app_id}`, OPS_TOKEN).send({
        name: 'Renamed',
        redirect_uris: ['https://new.example/cb'],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ app_id: a.app_id, name: 'Renamed', redirect_uris: ['https://new.example/cb'] });
      const [row] = await h.storage.db.query<{ name: string; redirect_uris: string[] }>(
        'SELECT name, redirect_uris FROM apps WHERE id = $1',
        [a.app_id],
      );
      expect(row).toEqual({ name: 'Renamed', redirect_uris: ['https://new.example/cb'] });
      const old = await request(h.publicApp).get('/authorize').query(authorizeQuery(a));
      expect(old.status).toBe(400);
      const [event] = await auditOf('app.updated', a.app_id);
      expect(event).toMatchObject({
        actor: { type: 'operator', id: 'ops-alice' },
        detail: { changed: ['name', 'redirect_uris'], name: 'Renamed' },
      });
    });

    it.each([
      [{}, 'invalid_parameter', 'body'],
      [{ name: '' }, 'required', 'name'],
      [{ redirect_uris: ['http://evil.example/cb'] }, 'invalid_parameter', 'redirect_uris.0'],
      [{ redirect_uris: [] }, 'invalid_parameter', 'redirect_uris'],
      [{ client_secret: 'x' }, 'invalid_parameter', 'client_secret'],
    ])('refuses the update %p with %s naming %s', async (body, code, attribute) => {
      const a = await createApp(h);
      const res = await admin('patch', `/admin/apps/${a.app_id}`).send(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code, attribute });
    });

    it('answers a POST or PATCH without a JSON body with 400 naming the first required field, not 500', async () => {
      const a = await createApp(h);
      const apps = async () => (await h.storage.db.query('SELECT id FROM apps')).length;
      const before = await apps();
      // no body and no Content-Type, then a body of another type: neither is read as JSON
      for (const res of [
        await admin('post', '/admin/apps'),
        await admin('post', '/admin/apps').set('Content-Type', 'text/plain').send('name=x'),
      ]) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ code: 'required', detail: 'This attribute is required.', attribute: 'name' });
      }
      expect(await apps()).toBe(before);
      expect((await admin('post', '/admin/users')).body).toMatchObject({ code: 'required', attribute: 'username' });
      const patch = await admin('patch', `/admin/apps/${a.app_id}`);
      expect(patch.status).toBe(400);
      expect(patch.body).toMatchObject({ code: 'invalid_parameter', attribute: 'body' });
    });

    it('disables and enables an app, rotates its secret, each audited with the operator', async () => {
      const a = await createApp(h);
      expect((await admin('post', `/admin/apps/${a.app_id}/disable`).expect(200)).body).toMatchObject({
        disabled: true,
        disabled_at: expect.any(String),
      });
      expect((await admin('post', `/admin/apps/${a.app_id}/enable`).expect(200)).body).toMatchObject({
        disabled: false,
        disabled_at: null,
      });
      await admin('post', `/admin/apps/${a.app_id}/rotate-secret`, OPS_TOKEN).expect(200);
      expect(await auditOf('app.created', a.app_id)).toHaveLength(1);
      expect((await auditOf('app.disabled', a.app_id))[0]).toMatchObject({
        actor: { type: 'operator', id: 'admin' },
        request_id: expect.any(String),
        client_address: expect.any(String),
      });
      expect(await auditOf('app.enabled', a.app_id)).toHaveLength(1);
      expect((await auditOf('app.secret_rotated', a.app_id))[0]).toMatchObject({ actor: { id: 'ops-alice' } });
    });
  });

  describe('users', () => {
    it('lists users by username in pages, filtered by a username prefix', async () => {
      for (const name of ['pager-c', 'pager-a', 'pager-b', 'pager_x', 'other-1'])
        await admin('post', '/admin/users')
          .send({ username: name, password: 'long enough pw', verification_level: 'device' })
          .expect(201);
      const first = await admin('get', '/admin/users?username=pager-&limit=2').expect(200);
      expect(first.body.users.map((u: { username: string }) => u.username)).toEqual(['pager-a', 'pager-b']);
      expect(first.body.users[0]).toEqual({
        user_id: expect.stringMatching(/^usr_/),
        username: 'pager-a',
        verification_level: 'device',
        name: null,
        given_name: null,
        family_name: null,
        created_at: expect.any(String),
        disabled: false,
        disabled_at: null,
      });
      const second = await admin('get', `/admin/users?username=pager-&limit=2&cursor=${first.body.next_cursor}`).expect(
        200,
      );
      expect(second.body).toEqual({ users: [expect.objectContaining({ username: 'pager-c' })], next_cursor: null });
      // "_" is a character, not a LIKE wildcard
      expect(
        (await admin('get', '/admin/users?username=pager_').expect(200)).body.users.map(
          (u: { username: string }) => u.username,
        ),
      ).toEqual(['pager_x']);
      expect((await admin('get', '/admin/users?limit=5000')).body).toMatchObject({
        code: 'invalid_parameter',
        attribute: 'limit',
      });
    });

    it('shows a user with their consents; updates names and level', async () => {
      const a = await createApp(h);
      const u = await createUser(h);
      await signIn(a, u);
      const shown = await admin('get', `/admin/users/${u.user_id}`).expect(200);
      expect(shown.body).toMatchObject({
        user_id: u.user_id,
        username: u.username,
        name: 'Ada Lovelace',
        consents: [{ app_id: a.app_id, scopes: ['openid', 'profile'], granted_at: expect.any(String) }],
      });
      const updated = await admin('patch', `/admin/users/${u.user_id}`)
        .send({ family_name: null, verification_level: 'device' })
        .expect(200);
      expect(updated.body).toMatchObject({ family_name: null, given_name: 'Ada', verification_level: 'device' });
      expect(
        (await admin('patch', `/admin/users/${u.user_id}`).send({ verification_level: 'iris' })).body,
      ).toMatchObject({ code: 'invalid_parameter', attribute: 'verification_level' });
      expect((await auditOf('user.updated', u.user_id))[0]).toMatchObject({
        detail: { changed: ['family_name', 'verification_level'] },
      });
      expect((await admin('get', '/admin/users/usr_missing')).status).toBe(404);
    });

    it('a disabled user cannot sign in and their tokens stop working at once; enabled, they sign in again (the old tokens stay inactive)', async () => {
      const a = await createApp(h);
      const u = await createUser(h);
      const { agent, access } = await signIn(a, u);
      expect((await userinfo(access)).status).toBe(200);
      const disabled = await admin('post', `/admin/users/${u.user_id}/disable`, OPS_TOKEN).expect(200);
      expect(disabled.body).toMatchObject({ disabled: true, disabled_at: expect.any(String) });
      expect((await userinfo(access)).status).toBe(401);
      expect((await introspect(a, access)).body).toEqual({ active: false });
      // the browser session no longer counts: prompt=none answers login_required
      const silent = await agent.get('/authorize').query({ ...authorizeQuery(a), prompt: 'none' });
      expect(callbackParams(silent).error).toBe('login_required');
      const refused = await submitSignIn(a, u.username, u.password);
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('This account is disabled');
      await admin('post', `/admin/users/${u.user_id}/enable`).expect(200);
      // disabling ended the user's sessions, and with them the tokens issued in them (issue 23, item 7)
      expect((await userinfo(access)).status).toBe(401);
      expect((await userinfo((await signIn(a, u)).access)).status).toBe(200);
      expect(await auditOf('user.disabled', u.user_id)).toEqual([
        expect.objectContaining({ actor: { type: 'operator', id: 'ops-alice' } }),
      ]);
      expect(await auditOf('user.enabled', u.user_id)).toHaveLength(1);
      expect((await auditOf('signin.failed', u.user_id))[0]).toMatchObject({
        detail: { reason: 'user_disabled', method: 'password' },
      });
    });

    it('deleting a user removes their subjects and consents, ends their tokens and codes, and is audited', async () => {
      const a = await createApp(h);
      const u = await createUser(h);
      const { access } = await signIn(a, u);
      const pending = callbackParams(await browserFlow(request.agent(h.publicApp), authorizeQuery(a), u)).code;
      expect((await introspect(a, access)).body.active).toBe(true);
      await admin('delete', `/admin/users/${u.user_id}`).expect(204);
      expect((await userinfo(access)).status).toBe(401);
      expect((await introspect(a, access)).body).toEqual({ active: false });
      expect((await exchange(a, pending)).body.code).toBe('invalid_grant');
      for (const table of ['users WHERE id', 'consents WHERE user_id', 'subjects WHERE user_id'])
        expect(await h.storage.db.query(`SELECT 1 FROM ${table} = $1`, [u.user_id])).toHaveLength(0);
      expect((await admin('get', `/admin/users/${u.user_id}`)).status).toBe(404);
      expect((await admin('delete', `/admin/users/${u.user_id}`)).status).toBe(404);
      expect((await auditOf('user.deleted', u.user_id))[0]).toMatchObject({ detail: { consents: [a.app_id] } });
      expect((await submitSignIn(a, u.username, u.password)).status).toBe(400);
    });

    it('resets a password: given or generated (returned once), the old one stops working, nothing logged in the audit', async () => {
      const a = await createApp(h);
      const u = await createUser(h);
      const given = await admin('post', `/admin/users/${u.user_id}/reset-password`)
        .send({ password: 'a brand new password' })
        .expect(200);
      expect(given.body).toEqual({ user_id: u.user_id });
      expect((await submitSignIn(a, u.username, u.password)).status).toBe(400);
      expect((await submitSignIn(a, u.username, 'a brand new password')).status).toBe(303);
      const generated = await admin('post', `/admin/users/${u.user_id}/reset-password`).send({}).expect(200);
      expect(generated.body.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect((await submitSignIn(a, u.username, generated.body.password)).status).toBe(303);
      expect(
        (await admin('post', `/admin/users/${u.user_id}/reset-password`).send({ password: 'short' })).body,
      ).toMatchObject({ code: 'invalid_parameter', attribute: 'password' });
      const events = await auditOf('user.password_reset', u.user_id);
      expect(events).toHaveLength(2);
      expect(JSON.stringify(events)).not.toContain(generated.body.password);
      expect(JSON.stringify(events)).not.toContain('a brand new password');
    });
  });

  describe('signing keys', () => {
    it('lists the published keys with their dates, rotates now, audited', async () => {
      const before = await admin('get', '/admin/keys').expect(200);
      // issue 40, item 2: every algorithm's keys are listed; the RS256 one is the rotation's subject
      const active = before.body.keys.filter((k: { active: boolean; alg: string }) => k.active && k.alg === 'RS256');
      expect(active).toEqual([
        expect.objectContaining({
          kid: expect.any(String),
          kty: 'RSA',
          alg: 'RS256',
          use: 'sig',
          status: 'active',
          created_at: expect.any(String),
          retired_at: null,
        }),
      ]);
      const rotated = await admin('post', '/admin/keys/rotate', OPS_TOKEN).expect(200);
      const after = await admin('get', '/admin/keys').expect(200);
      const byKid = Object.fromEntries(after.body.keys.map((k: { kid: string }) => [k.kid, k]));
      expect(byKid[rotated.body.kid]).toMatchObject({ active: true });
      expect(byKid[active[0].kid]).toMatchObject({
        active: false,
        retired_at: expect.any(String),
        unpublish_at: expect.any(String),
      });
      expect(JSON.stringify(after.body)).not.toMatch(/"d"|private/);
      expect((await auditOf('signing_key.rotated', rotated.body.kid))[0]).toMatchObject({
        actor: { id: 'ops-alice' },
        detail: { retired: active[0].kid },
      });
    });
  });

  describe('audit trail', () => {
    it('records sign-in success and failure with the client address and method, and consent given and withdrawn', async () => {
      const a = await createApp(h);
      const u = await createUser(h);
      expect((await submitSignIn(a, u.username, 'wrong password!')).status).toBe(400);
      expect((await submitSignIn(a, 'nobody-at-all', 'wrong password!')).status).toBe(400);
      await signIn(a, u);
      const [failed] = await auditOf('signin.failed', u.user_id);
      expect(failed).toMatchObject({
        actor: { type: 'anonymous', id: null },
        client_address: expect.stringMatching(/127\.0\.0\.1|::1/),
        request_id: expect.any(String),
        detail: { method: 'password', reason: 'wrong_password', username: u.username, app_id: a.app_id },
      });
      expect(JSON.stringify(failed)).not.toContain('wrong password!');
      // an unknown username is kept as its keyed hash only (it may be a password typed in the wrong field)
      const hash = hmacHex(h.config.secret, 'audit-username:nobody-at-all');
      const unknown = (await auditOf('signin.failed')).find((e) => e.detail.username_hash === hash);
      expect(unknown).toMatchObject({ subject: null, detail: { reason: 'unknown_username' } });
      expect(JSON.stringify(await auditOf('signin.failed'))).not.toContain('nobody-at-all');
      expect((await auditOf('signin.succeeded', u.user_id))[0]).toMatchObject({
        actor: { type: 'user', id: u.user_id },
        detail: { method: 'password', app_id: a.app_id },
      });
      expect((await auditOf('consent.granted', u.user_id))[0]).toMatchObject({
        actor: { type: 'user', id: u.user_id },
        detail: { app_id: a.app_id, scopes: ['openid', 'profile'] },
      });
      await admin('delete', `/admin/users/${u.user_id}/consents/${a.app_id}`, OPS_TOKEN).expect(204);
      expect((await auditOf('consent.withdrawn', u.user_id))[0]).toMatchObject({
        actor: { type: 'operator', id: 'ops-alice' },
        detail: { app_id: a.app_id },
      });
    });

    it('a silent sign-in writes no audit event', async () => {
      const a = await createApp(h);
      const u = await createUser(h);
      const { agent } = await signIn(a, u);
      const [{ n: before }] = await h.storage.db.query<{ n: string }>('SELECT count(*) AS n FROM audit_events');
      const silent = await agent.get('/authorize').query({ ...authorizeQuery(a), prompt: 'none' });
      expect(callbackParams(silent).code).toMatch(/^[0-9a-f]{64}$/);
      const [{ n: after }] = await h.storage.db.query<{ n: string }>('SELECT count(*) AS n FROM audit_events');
      expect(after).toBe(before);
    });

    it('records the tokens revoked when a code is replayed', async () => {
      const a = await createApp(h);
      const u = await createUser(h);
      const { code, access } = await signIn(a, u);
      expect((await exchange(a, code)).body.code).toBe('invalid_grant');
      expect((await introspect(a, access)).body.active).toBe(false);
      const [event] = await auditOf('token.revoked', a.app_id);
      expect(event).toMatchObject({
        detail: { reason: 'authorization_code_replayed', token_ids: [expect.any(String)] },
      });
    });

    it('records app and user creation by the operator who did it', async () => {
      const res = await admin('post', '/admin/apps', OPS_TOKEN)
        .send({ name: 'Audited', redirect_uris: [REDIRECT_URI] })
        .expect(201);
      expect((await auditOf('app.created', res.body.app_id))[0]).toMatchObject({
        actor: { type: 'operator', id: 'ops-alice' },
        detail: { name: 'Audited' },
      });
      expect(JSON.stringify(await auditOf('app.created', res.body.app_id))).not.toContain(res.body.client_secret);
      const user = await admin('post', '/admin/users')
        .send({ username: 'audited-user', password: 'long enough pw', verification_level: 'orb' })
        .expect(201);
      const [created] = await auditOf('user.created', user.body.user_id);
      expect(created).toMatchObject({ actor: { id: 'admin' }, detail: { username: 'audited-user' } });
      expect(JSON.stringify(created)).not.toContain('long enough pw');
    });

    it('pages newest first with a cursor, filters by type and since, refuses bad parameters naming them', async () => {
      for (let i = 0; i < 3; i++) await createApp(h, [REDIRECT_URI], `paging ${i}`);
      const first = await admin('get', '/admin/audit?type=app.created&limit=2').expect(200);
      expect(first.body.events).toHaveLength(2);
      expect(Number(first.body.events[0].id)).toBeGreaterThan(Number(first.body.events[1].id));
      const second = await admin(
        'get',
        `/admin/audit?type=app.created&limit=2&cursor=${first.body.next_cursor}`,
      ).expect(200);
      expect(Number(second.body.events[0].id)).toBeLessThan(Number(first.body.events[1].id));
      const both = await admin('get', '/admin/audit?type=app.created,user.created&limit=1000').expect(200);
      expect(new Set(both.body.events.map((e: { type: string }) => e.type))).toEqual(
        new Set(['app.created', 'user.created']),
      );
      const future = await admin('get', '/admin/audit?since=2999-01-01T00:00:00Z').expect(200);
      expect(future.body).toEqual({ events: [], next_cursor: null });
      const recent = await admin(
        'get',
        `/admin/audit?since=${encodeURIComponent(new Date(Date.now() - 3600000).toISOString())}&limit=1`,
      ).expect(200);
      expect(recent.body.events).toHaveLength(1);
      for (const [query, attribute] of [
        ['since=yesterday', 'since'],
        ['type=DROP TABLE', 'type'],
        ['limit=-1', 'limit'],
        ['cursor=abc', 'cursor'],
      ]) {
        const bad = await admin('get', `/admin/audit?${query}`);
        expect(bad.status).toBe(400);
        expect(bad.body).toMatchObject({ code: 'invalid_parameter', attribute });
      }
      expect((await request(h.adminApp).get('/admin/audit')).status).toBe(401);
    });

    it('is append-only, and the purge removes only what is older than AUDIT_RETENTION_DAYS', async () => {
      await h.storage.db.query(
        "INSERT INTO audit_events (at, type, actor_type, actor) VALUES (now() - interval '400 days', 'app.created', 'operator', 'old'), (now() - interval '300 days', 'app.created', 'operator', 'kept')",
      );
      await expect(h.storage.db.query("UPDATE audit_events SET actor = 'someone else'")).rejects.toThrow(/append-only/);
      expect(h.config.AUDIT_RETENTION_DAYS).toBe(365);
      expect(await h.ctx.kernel.audit.purge()).toBe(1);
      const actors = (
        await h.storage.db.query<{ actor: string }>("SELECT actor FROM audit_events WHERE actor IN ('old', 'kept')")
      ).map((r) => r.actor);
      expect(actors).toEqual(['kept']);
    });
  });

  describe('named admin tokens', () => {
    it('creates a stored token (hashed), names its holder in the audit, and a revoked one is refused at once', async () => {
      const created = await admin('post', '/admin/admin-tokens').send({ name: 'ci-bot' }).expect(201);
      expect(created.body).toEqual({
        name: 'ci-bot',
        token: expect.stringMatching(/^adm_[A-Za-z0-9_-]{43}$/),
        created_by: 'admin',
      });
      const [row] = await h.storage.db.query<{ token_hash: string }>(
        "SELECT token_hash FROM admin_tokens WHERE name = 'ci-bot'",
      );
      expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.token_hash).not.toContain(created.body.token);
      const app = await admin('post', '/admin/apps', created.body.token)
        .send({ name: 'By bot', redirect_uris: [REDIRECT_URI] })
        .expect(201);
      expect((await auditOf('app.created', app.body.app_id))[0]).toMatchObject({
        actor: { type: 'operator', id: 'ci-bot' },
      });
      const list = await admin('get', '/admin/admin-tokens').expect(200);
      expect(list.body.tokens).toEqual(
        expect.arrayContaining([
          { name: 'admin', source: 'environment', created_at: null, created_by: null },
          { name: 'ops-alice', source: 'environment', created_at: null, created_by: null },
          { name: 'ci-bot', source: 'stored', created_at: expect.any(String), created_by: 'admin' },
        ]),
      );
      expect(JSON.stringify(list.body)).not.toContain(created.body.token);
      await admin('delete', '/admin/admin-tokens/ci-bot', OPS_TOKEN).expect(204);
      expect((await admin('get', '/admin/apps', created.body.token)).status).toBe(401);
      expect((await auditOf('admin_token.created', 'ci-bot'))[0]).toMatchObject({ actor: { id: 'admin' } });
      expect((await auditOf('admin_token.revoked', 'ci-bot'))[0]).toMatchObject({ actor: { id: 'ops-alice' } });
    });

    it('registers a given token (the CLI makes one for all services), and refuses taken or bad names', async () => {
      const token = `adm_${'A'.repeat(43)}`;
      await admin('post', '/admin/admin-tokens').send({ name: 'given', token }).expect(201);
      expect((await admin('get', '/admin/keys', token)).status).toBe(200);
      expect((await admin('post', '/admin/admin-tokens').send({ name: 'given' })).body).toMatchObject({
        code: 'name_taken',
        attribute: 'name',
      });
      expect((await admin('post', '/admin/admin-tokens').send({ name: 'ops-alice' })).body).toMatchObject({
        code: 'name_taken',
        attribute: 'name',
      });
      expect((await admin('post', '/admin/admin-tokens').send({ name: 'Bad Name' })).body).toMatchObject({
        code: 'invalid_parameter',
        attribute: 'name',
      });
      expect(
        (await admin('post', '/admin/admin-tokens').send({ name: 'short', token: 'adm_short' })).body,
      ).toMatchObject({ code: 'invalid_parameter', attribute: 'token' });
      expect((await admin('delete', '/admin/admin-tokens/nobody')).status).toBe(404);
      expect((await admin('get', '/admin/keys', `adm_${'B'.repeat(43)}`)).status).toBe(401);
    });
  });
});
