import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import {
  ADMIN_TOKEN,
  browserFlow,
  callbackParams,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

// Issue 41, item 2: Dynamic Client Registration (RFC 7591) and its management (RFC 7592), under
// CLIENT_REGISTRATION; initial access tokens through the admin API.

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};
const admin = (h: IdentityHarness) => ({
  get: (path: string) => request(h.adminApp).get(`/admin${path}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`),
  post: (path: string, body: object = {}) =>
    request(h.adminApp).post(`/admin${path}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`).send(body),
});
const auditOf = async (h: IdentityHarness, type: string) =>
  (await admin(h).get(`/audit?type=${type}`)).body.events as {
    subject: string;
    actor: { type: string };
    detail: Record<string, unknown>;
  }[];

describe('POST /register, CLIENT_REGISTRATION=open (the embedded default)', () => {
  let h: IdentityHarness;
  let offsetMs = 0;
  beforeAll(async () => {
    h = await identityHarness({ REGISTRATIONS_PER_ADDRESS: '100' }, {}, { now: () => Date.now() + offsetMs });
  });
  afterAll(() => h.close());

  const register = (body: object, headers: Record<string, string> = {}) =>
    request(h.publicApp).post('/register').set(headers).send(body);

  it('registers a public client: 201, client_id, a registration access token, the metadata as kept', async () => {
    const res = await register({
      client_name: 'Claude Code',
      redirect_uris: ['http://127.0.0.1:33418/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      logo_uri: 'https://example.com/logo.png',
      jwks_uri: 'https://ignored.example/jwks',
    });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      client_id: expect.stringMatching(/^app_[0-9a-f]{32}$/),
      client_id_issued_at: expect.any(Number),
      client_name: 'Claude Code',
      redirect_uris: ['http://127.0.0.1:33418/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      logo_uri: 'https://example.com/logo.png',
      registration_access_token: expect.stringMatching(/^rat_[0-9a-f]{48}$/),
      registration_client_uri: `${h.config.issuer}/register/${res.body.client_id}`,
    });
    expect(res.headers.location).toBe(res.body.registration_client_uri);
    // an ordinary app, marked as self-registered; its token only as a keyed hash
    const shown = await admin(h).get(`/apps/${res.body.client_id}`);
    expect(shown.body).toMatchObject({
      registration: 'dynamic',
      name: 'Claude Code',
      token_endpoint_auth_method: 'none',
    });
    const [row] = await h.storage.db.query<{ registration_token_hash: string }>(
      'SELECT registration_token_hash FROM apps WHERE id = $1',
      [res.body.client_id],
    );
    expect(row.registration_token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(res.body.registration_access_token);
    const events = await auditOf(h, 'app.registered');
    expect(events.find((e) => e.subject === res.body.client_id)).toMatchObject({
      actor: { type: 'anonymous' },
      detail: { registration: 'dynamic', name: 'Claude Code', token_endpoint_auth_method: 'none' },
    });
    const list = await admin(h).get('/apps');
    expect(list.body.apps.find((a: { app_id: string }) => a.app_id === res.body.client_id).registration).toBe(
      'dynamic',
    );
  });

  it.each([
    [{ redirect_uris: ['http://example.com/cb'] }, 'invalid_redirect_uri', 'redirect_uris'],
    [{ redirect_uris: ['https://example.com/cb#frag'] }, 'invalid_redirect_uri', 'redirect_uris'],
    [{ redirect_uris: ['https://u:p@evil.example/cb'] }, 'invalid_redirect_uri', 'redirect_uris'],
    [{ redirect_uris: [] }, 'invalid_redirect_uri', 'redirect_uris'],
    [{}, 'invalid_redirect_uri', 'redirect_uris'],
    [
      { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'client_secret_basic' },
      'invalid_client_metadata',
      'token_endpoint_auth_method',
    ],
    [
      { redirect_uris: ['https://a.example/cb'], grant_types: ['client_credentials'] },
      'invalid_client_metadata',
      'grant_types',
    ],
    [
      { redirect_uris: ['https://a.example/cb'], response_types: ['token'] },
      'invalid_client_metadata',
      'response_types',
    ],
    [
      { redirect_uris: ['https://a.example/cb'], client_uri: 'javascript:alert(1)' },
      'invalid_client_metadata',
      'client_uri',
    ],
    [
      { redirect_uris: ['https://a.example/cb'], client_name: 'x'.repeat(201) },
      'invalid_client_metadata',
      'client_name',
    ],
  ])('refuses %j with %s naming %s', async (body, error, attribute) => {
    const res = await register(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error, code: error, attribute });
    expect(res.body.error_description).toContain(attribute);
  });

  it('refuses the device_code grant type to a client registering itself (security review: device-code phishing), at registration and at an RFC 7592 update', async () => {
    const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';
    const body = {
      client_name: 'Terminal agent',
      redirect_uris: ['http://127.0.0.1:33419/callback'],
      token_endpoint_auth_method: 'none',
    };
    const dynamicApps = async () =>
      (await h.storage.db.query<{ n: number }>("SELECT count(*)::int AS n FROM apps WHERE registration = 'dynamic'"))[0]
        .n;
    const before = await dynamicApps();
    const refused = await register({ ...body, grant_types: ['authorization_code', deviceGrant] });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error: 'invalid_client_metadata',
      code: 'invalid_client_metadata',
      attribute: 'grant_types',
    });
    expect(refused.body.error_description).toContain(`grant_types may not include ${deviceGrant}`);
    expect(refused.body.error_description).toContain('CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW=true');
    expect(await dynamicApps()).toBe(before);
    // registered without it, an update may not add it either; the client keeps the code flow only
    const created = (await register(body)).body;
    const updated = await request(h.publicApp)
      .put(`/register/${created.client_id}`)
      .set('Authorization', `Bearer ${created.registration_access_token}`)
      .send({ ...body, client_id: created.client_id, grant_types: ['authorization_code', deviceGrant] });
    expect(updated.status).toBe(400);
    expect(updated.body).toMatchObject({ error: 'invalid_client_metadata', attribute: 'grant_types' });
    expect((await admin(h).get(`/apps/${created.client_id}`)).body.device_authorization_grant).toBe(false);
    const started = await request(h.publicApp)
      .post('/device_authorization')
      .type('form')
      .send({ client_id: created.client_id, scope: 'openid' });
    expect([started.status, started.body.error]).toEqual([400, 'unauthorized_client']);
  });

  it('refuses a body that is not JSON', async () => {
    const res = await request(h.publicApp)
      .post('/register')
      .type('form')
      .send({ redirect_uris: 'https://a.example/cb' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_content_type', error: 'invalid_request' });
  });

  it('RFC 7592: reads, replaces and deletes with the registration access token; anything else is 401', async () => {
    const created = (await register({ client_name: 'CLI', redirect_uris: ['http://localhost:8080/cb'] })).body;
    const uri = new URL(created.registration_client_uri).pathname;
    const bearer = { Authorization: `Bearer ${created.registration_access_token}` };

    const read = await request(h.publicApp).get(uri).set(bearer);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      client_id: created.client_id,
      client_name: 'CLI',
      redirect_uris: ['http://localhost:8080/cb'],
    });
    expect(read.body.registration_access_token).toBeUndefined();

    for (const wrong of [
      {},
      { Authorization: 'Bearer rat_0000' },
      { Authorization: `Bearer ${created.registration_access_token}x` },
    ]) {
      const refused = await request(h.publicApp).get(uri).set(wrong);
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      expect(refused.body.error).toBe('invalid_token');
    }
    // another client's token does not open this one
    const other = (await register({ redirect_uris: ['https://b.example/cb'] })).body;
    expect(
      (await request(h.publicApp).get(uri).set('Authorization', `Bearer ${other.registration_access_token}`)).status,
    ).toBe(401);

    const replaced = await request(h.publicApp)
      .put(uri)
      .set(bearer)
      .send({ client_id: created.client_id, client_name: 'CLI 2', redirect_uris: ['http://localhost:8081/cb'] });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      client_name: 'CLI 2',
      redirect_uris: ['http://localhost:8081/cb'],
      token_endpoint_auth_method: 'none',
    });
    expect((await admin(h).get(`/apps/${created.client_id}`)).body.redirect_uris).toEqual(['http://localhost:8081/cb']);
    const badUpdate = await request(h.publicApp)
      .put(uri)
      .set(bearer)
      .send({
        client_id: created.client_id,
        redirect_uris: ['https://c.example/cb'],
        token_endpoint_auth_method: 'client_secret_post',
      });
    expect(badUpdate.status).toBe(400);
    expect(badUpdate.body.attribute).toBe('token_endpoint_auth_method');
    const wrongId = await request(h.publicApp)
      .put(uri)
      .set(bearer)
      .send({ client_id: other.client_id, redirect_uris: ['https://c.example/cb'] });
    expect(wrongId.body).toMatchObject({ error: 'invalid_client_metadata', attribute: 'client_id' });

    const deleted = await request(h.publicApp).delete(uri).set(bearer);
    expect(deleted.status).toBe(204);
    expect((await admin(h).get(`/apps/${created.client_id}`)).status).toBe(404);
    expect((await request(h.publicApp).get(uri).set(bearer)).status).toBe(401);
    const types = (await admin(h).get('/audit?type=app.updated,app.deleted')).body.events
      .filter((e: { subject: string }) => e.subject === created.client_id)
      .map((e: { type: string; actor: { type: string; id: string } }) => [e.type, e.actor.type, e.actor.id]);
    expect(types).toEqual([
      ['app.deleted', 'app', created.client_id],
      ['app.updated', 'app', created.client_id],
    ]);
  });

  it('signs a person in through a registered client: PKCE required, the consent page says it is not reviewed', async () => {
    const client = (await register({ client_name: 'Agent <b>X</b>', redirect_uris: [REDIRECT_URI] })).body;
    const user = await createUser(h);
    const agent = request.agent(h.publicApp);
    const noPkce = await agent
      .get('/authorize')
      .query({ client_id: client.client_id, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'openid' });
    expect(callbackParams(noPkce).error).toBe('invalid_request');

    const { verifier, challenge } = pkce();
    const query = {
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'openid profile',
      state: 's1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    let consent = await agent.get('/authorize').query(query);
    while (consent.status === 302 || consent.status === 303) consent = await agent.get(consent.headers.location);
    const interaction = /name="interaction" value="([^"]+)"/.exec(consent.text)![1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(consent.text)![1];
    consent = await agent
      .post('/signin')
      .type('form')
      .send({ interaction, csrf, username: user.username, password: user.password });
    while (consent.status === 302 || consent.status === 303) consent = await agent.get(consent.headers.location);
    expect(consent.text).toContain('<h1>Agent &lt;b&gt;X&lt;/b&gt; wants to</h1>');
    expect(consent.text).toMatch(/not reviewed by the\s+operator/);
    expect(consent.text).toContain('data-scope="openid"');
    expect(consent.text).toContain('data-scope="profile"');

    const done = await browserFlow(agent, query, user);
    const params = callbackParams(done);
    expect(params.state).toBe('s1');
    const tokens = await request(h.publicApp).post('/token').type('form').send({
      grant_type: 'authorization_code',
      code: params.code,
      redirect_uri: REDIRECT_URI,
      client_id: client.client_id,
      code_verifier: verifier,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.access_token).toBeTruthy();
  });

  it('RFC 7592 delete ends what the client was given: its refresh token, its access token, its rows', async () => {
    // registered with refresh_token, so its grant gives one (a self-registered client holds to its grant_types)
    const reg = (
      await register({
        client_name: 'Gone soon',
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
      })
    ).body;
    const user = await createUser(h);
    const { verifier, challenge } = pkce();
    const query = {
      client_id: reg.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'openid offline_access',
      state: 's2',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    const done = await browserFlow(request.agent(h.publicApp), query, user);
    const tokens = await request(h.publicApp)
      .post('/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: callbackParams(done).code,
        redirect_uri: REDIRECT_URI,
        client_id: reg.client_id,
        code_verifier: verifier,
      })
      .expect(200);
    expect(tokens.body.refresh_token).toEqual(expect.any(String));
    await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${tokens.body.access_token}`).expect(200);

    await request(h.publicApp)
      .delete(`/register/${reg.client_id}`)
      .set('Authorization', `Bearer ${reg.registration_access_token}`)
      .expect(204);

    const refreshed = await request(h.publicApp)
      .post('/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: reg.client_id });
    expect(refreshed.status).toBe(401);
    expect(refreshed.body.error).toBe('invalid_client');
    const userinfo = await request(h.publicApp)
      .get('/userinfo')
      .set('Authorization', `Bearer ${tokens.body.access_token}`);
    expect(userinfo.status).toBe(401);
    const rows = await h.storage.db.query('SELECT 1 FROM refresh_families WHERE client_id = $1', [reg.client_id]);
    expect(rows).toHaveLength(0);
    const tokenRows = await h.storage.db.query('SELECT 1 FROM refresh_tokens WHERE token_hash = $1', [
      createHash('sha256')
        .update(tokens.body.refresh_token as string)
        .digest('hex'),
    ]);
    expect(tokenRows).toHaveLength(0);
  });

  it('deletes open registrations nobody signed in to after REGISTRATION_UNUSED_HOURS, and keeps used ones', async () => {
    const unused = (await register({ redirect_uris: ['https://unused.example/cb'] })).body;
    const [used] = await h.storage.db.query<{ id: string }>(
      "SELECT apps.id FROM apps JOIN subjects ON subjects.app_id = apps.id WHERE registration = 'dynamic' LIMIT 1",
    );
    expect(used).toBeDefined();
    offsetMs = 25 * 3600 * 1000;
    const removed = await h.ctx.registration.registrations.sweep().finally(() => (offsetMs = 0));
    expect(removed).toContain(unused.client_id);
    expect(removed).not.toContain(used.id);
    expect((await admin(h).get(`/apps/${unused.client_id}`)).status).toBe(404);
    expect((await admin(h).get(`/apps/${used.id}`)).status).toBe(200);
    const events = await auditOf(h, 'app.deleted');
    expect(events.find((e) => e.subject === unused.client_id)).toMatchObject({
      actor: { type: 'system' },
      detail: { reason: 'unused' },
    });
  });

  it('an operator disables a registered client like any app', async () => {
    const registered = await register({ redirect_uris: [REDIRECT_URI] });
    expect(registered.status).toBe(201);
    const client = registered.body;
    expect((await admin(h).post(`/apps/${client.client_id}/disable`)).body).toMatchObject({
      disabled: true,
      registration: 'dynamic',
    });
    const { challenge } = pkce();
    const res = await request(h.publicApp).get('/authorize').query({
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'openid',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('Unknown or disabled client_id.');
  });

  it('limits registrations per address (REGISTRATIONS_PER_ADDRESS) with 429 and Retry-After', async () => {
    const fresh = await identityHarness({ REGISTRATIONS_PER_ADDRESS: '2' });
    try {
      const one = () =>
        request(fresh.publicApp)
          .post('/register')
          .send({ redirect_uris: ['https://a.example/cb'] });
      expect((await one()).status).toBe(201);
      expect((await one()).status).toBe(201);
      const third = await one();
      expect(third.status).toBe(429);
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      expect(third.body.code).toBe('too_many_requests');
    } finally {
      await fresh.close();
    }
  }, 180000); // a service of its own: a fresh embedded database, slow on a busy machine
});

describe('CLIENT_REGISTRATION=open with CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW=true', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    h = await identityHarness({ CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW: 'true' });
  });
  afterAll(() => h.close());

  const register = (body: object) => request(h.publicApp).post('/register').send(body);

  it('identity migration 027 turns the device flow off for clients that registered themselves, and only for them', async () => {
    const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';
    const selfRegistered = (
      await register({
        redirect_uris: ['http://127.0.0.1:33419/callback'],
        grant_types: ['authorization_code', deviceGrant],
      }).expect(201)
    ).body;
    const operators = (
      await admin(h).post('/apps', {
        name: 'Operator CLI',
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'none',
        device_authorization_grant: true,
      })
    ).body;
    expect(operators.device_authorization_grant).toBe(true);
    const sql = fs.readFileSync(
      path.join(__dirname, '..', 'migrations', '027_self_registered_device_flow.sql'),
      'utf8',
    );
    await h.storage.db.query(sql);
    const flags = await h.storage.db.query<{ id: string; device_authorization_grant: boolean }>(
      'SELECT id, device_authorization_grant FROM apps WHERE id = ANY($1)',
      [[selfRegistered.client_id, operators.app_id]],
    );
    expect(Object.fromEntries(flags.map((r) => [r.id, r.device_authorization_grant]))).toEqual({
      [selfRegistered.client_id]: false,
      [operators.app_id]: true,
    });
  });

  it('a client registering the device_code grant type may use the device flow (RFC 8628, issue 41); others may not', async () => {
    const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';
    const res = await register({
      client_name: 'Terminal agent',
      redirect_uris: ['http://127.0.0.1:33419/callback'],
      grant_types: ['authorization_code', deviceGrant],
      token_endpoint_auth_method: 'none',
    });
    expect(res.status).toBe(201);
    expect(res.body.grant_types).toEqual(['authorization_code', deviceGrant]);
    expect((await admin(h).get(`/apps/${res.body.client_id}`)).body.device_authorization_grant).toBe(true);
    const started = await request(h.publicApp)
      .post('/device_authorization')
      .type('form')
      .send({ client_id: res.body.client_id, scope: 'openid' });
    expect(started.status).toBe(200);
    expect(started.body.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
    // RFC 7592: registered again without it, the device flow is off
    const updated = await request(h.publicApp)
      .put(`/register/${res.body.client_id}`)
      .set('Authorization', `Bearer ${res.body.registration_access_token}`)
      .send({
        client_id: res.body.client_id,
        client_name: 'Terminal agent',
        redirect_uris: ['http://127.0.0.1:33419/callback'],
        token_endpoint_auth_method: 'none',
      });
    expect(updated.status).toBe(200);
    expect((await admin(h).get(`/apps/${res.body.client_id}`)).body.device_authorization_grant).toBe(false);
    const refused = await request(h.publicApp)
      .post('/device_authorization')
      .type('form')
      .send({ client_id: res.body.client_id, scope: 'openid' });
    expect([refused.status, refused.body.error]).toEqual([400, 'unauthorized_client']);
  });
});

describe('CLIENT_REGISTRATION=token: initial access tokens from the admin API', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    h = await identityHarness({ CLIENT_REGISTRATION: 'token' });
  });
  afterAll(() => h.close());

  it('needs a token; registers confidential clients with one; a revoked token stops working', async () => {
    const body = {
      client_name: 'Backend',
      redirect_uris: ['https://backend.example/cb'],
      token_endpoint_auth_method: 'client_secret_basic',
    };
    const none = await request(h.publicApp).post('/register').send(body);
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('invalid_token');

    const created = await admin(h).post('/registration-tokens', { name: 'ci', expires_in_days: 30 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'ci',
      token: expect.stringMatching(/^reg_[0-9a-f]{48}$/),
      client_registration: 'token',
      revoked_at: null,
    });
    const [stored] = await h.storage.db.query<{ token_hash: string }>('SELECT token_hash FROM registration_tokens');
    expect(stored.token_hash).not.toContain(created.body.token);
    const listed = await admin(h).get('/registration-tokens');
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);
    expect(listed.body.registration_tokens[0]).toMatchObject({ id: created.body.id, last_used_at: null });

    const wrong = await request(h.publicApp)
      .post('/register')
      .set('Authorization', `Bearer ${created.body.token.slice(0, -1)}${created.body.token.endsWith('0') ? '1' : '0'}`)
      .send(body);
    expect(wrong.status).toBe(401);
    const ok = await request(h.publicApp)
      .post('/register')
      .set('Authorization', `Bearer ${created.body.token}`)
      .send(body);
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret: expect.stringMatching(/^sk_/),
      client_secret_expires_at: 0,
    });
    // the secret authenticates at /token (Basic), as an operator-made app's does: past the client, to the code
    const exchange = (secret: string) =>
      request(h.publicApp)
        .post('/token')
        .auth(ok.body.client_id, secret)
        .type('form')
        .send({ grant_type: 'authorization_code', code: 'unknown', redirect_uri: 'https://backend.example/cb' });
    expect((await exchange(ok.body.client_secret)).body.error).toBe('invalid_grant');
    expect((await exchange(`${ok.body.client_secret}x`)).body.error).toBe('invalid_client');
    // it holds to its grant_types (RFC 7591 §2), which cannot hold token exchange
    const delegated = await request(h.publicApp)
      .post('/token')
      .auth(ok.body.client_id, ok.body.client_secret)
      .type('form')
      .send({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: 'eyJ.x.y',
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      });
    expect(delegated.status).toBe(400);
    expect(delegated.body).toMatchObject({ error: 'unauthorized_client', attribute: 'grant_type' });
    expect((await admin(h).get('/registration-tokens')).body.registration_tokens[0].last_used_at).not.toBeNull();
    const events = await auditOf(h, 'app.registered');
    expect(events[0].detail).toMatchObject({ registration_token_id: created.body.id });

    const revoked = await admin(h).post(`/registration-tokens/${created.body.id}/revoke`);
    expect(revoked.body.revoked_at).not.toBeNull();
    expect(
      (await request(h.publicApp).post('/register').set('Authorization', `Bearer ${created.body.token}`).send(body))
        .status,
    ).toBe(401);
    expect((await admin(h).post('/registration-tokens/rgt_0000000000000000/revoke')).status).toBe(404);
    const audit = (await admin(h).get('/audit?type=registration_token.created,registration_token.revoked')).body.events;
    expect(audit.map((e: { type: string }) => e.type)).toEqual([
      'registration_token.revoked',
      'registration_token.created',
    ]);
  });

  it('a client registered with an initial access token may use the device flow (the operator vouched for it)', async () => {
    const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';
    const { token } = (await admin(h).post('/registration-tokens', { name: 'devices' })).body;
    const res = await request(h.publicApp)
      .post('/register')
      .set('Authorization', `Bearer ${token}`)
      .send({
        client_name: 'Terminal agent',
        redirect_uris: ['http://127.0.0.1:33419/callback'],
        grant_types: ['authorization_code', deviceGrant],
      });
    expect(res.status).toBe(201);
    expect((await admin(h).get(`/apps/${res.body.client_id}`)).body.device_authorization_grant).toBe(true);
    const started = await request(h.publicApp)
      .post('/device_authorization')
      .type('form')
      .send({ client_id: res.body.client_id, scope: 'openid' });
    expect(started.status).toBe(200);
  });
});

describe('CLIENT_REGISTRATION=off (the default with DATABASE_URL)', () => {
  it('has no /register and no registration_endpoint', async () => {
    const h = await identityHarness({ CLIENT_REGISTRATION: 'off' });
    try {
      expect(
        (
          await request(h.publicApp)
            .post('/register')
            .send({ redirect_uris: ['https://a.example/cb'] })
        ).status,
      ).toBe(404);
      const metadata = await request(h.publicApp).get('/.well-known/oauth-authorization-server');
      expect(metadata.body.registration_endpoint).toBeUndefined();
    } finally {
      await h.close();
    }
  }, 180000); // a service of its own: a fresh embedded database, slow on a busy machine

  it('defaults: open in the embedded mode, off with DATABASE_URL', () => {
    const { loadIdentityConfig } = jest.requireActual('../src/config') as typeof import('../src/config');
    const base = {
      IDENTITY_SECRET: 'x'.repeat(32),
      KEY_ENCRYPTION_KEY: 'y'.repeat(32),
      DATA_DIR: '/tmp/attest-reg-defaults',
    };
    expect(loadIdentityConfig(base).clientRegistration).toBe('open');
    expect(
      loadIdentityConfig({ ...base, DATABASE_URL: 'postgres://db/x', ADMIN_TOKEN: 'a'.repeat(32) }).clientRegistration,
    ).toBe('off');
    expect(() => loadIdentityConfig({ ...base, CLIENT_REGISTRATION: 'maybe' })).toThrow(
      /CLIENT_REGISTRATION must be off, open or token/,
    );
  });
});
