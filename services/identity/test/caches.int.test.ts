import jwt from 'jsonwebtoken';
import request from 'supertest';
import {
  ADMIN_TOKEN,
  basic,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

/**
 * Every in-process cache is warmed first (a request that succeeds), then the thing it holds is
 * disabled, changed, withdrawn or revoked through the admin API or the protocol, and the very next
 * request must see it: no cache may serve what was taken away.
 */
describe('in-process caches never serve what was disabled, withdrawn or revoked', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    h = await identityHarness();
  });
  afterAll(() => h.close());

  const admin = (method: 'post' | 'patch' | 'delete', path: string) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
  const userinfo = (token: string) => request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${token}`);
  const introspect = (a: { app_id: string; client_secret: string }, token: string) =>
    request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(a.app_id, a.client_secret))
      .type('form')
      .send({ token });

  async function signIn(
    a: { app_id: string; client_secret: string },
    u: { username: string; password: string },
    scope = 'openid profile',
  ) {
    const agent = request.agent(h.publicApp);
    const res = await browserFlow(
      agent,
      { response_type: 'code', scope, client_id: a.app_id, redirect_uri: REDIRECT_URI },
      u,
    );
    const exchange = (code: string) =>
      request(h.publicApp)
        .post('/token')
        .set('Authorization', basic(a.app_id, a.client_secret))
        .type('form')
        .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    const tokens = await exchange(callbackParams(res).code);
    expect(tokens.status).toBe(200);
    return { agent, exchange, access: tokens.body.access_token as string };
  }

  it('a disabled app: its tokens, its secret and its sign-ins are refused at once', async () => {
    const a = await createApp(h);
    const u = await createUser(h);
    const { agent, exchange, access } = await signIn(a, u);
    expect((await userinfo(access)).status).toBe(200);
    expect((await introspect(a, access)).body.active).toBe(true);

    await admin('post', `/admin/apps/${a.app_id}/disable`).expect(200);
    const info = await userinfo(access);
    expect(info.status).toBe(401);
    expect(info.body.code).toBe('invalid_token');
    const intro = await introspect(a, access);
    expect(intro.status).toBe(401);
    expect(intro.body.code).toBe('unauthenticated');
    const token = await exchange('0'.repeat(64));
    expect(token.status).toBe(401);
    expect(token.body).toMatchObject({ code: 'unauthenticated', error: 'invalid_client' });
    const authorize = await agent
      .get('/authorize')
      .set('Accept', 'application/json')
      .query({ response_type: 'code', scope: 'openid', client_id: a.app_id, redirect_uri: REDIRECT_URI });
    expect(authorize.status).toBe(400);
    expect(authorize.body.code).toBe('invalid_client');

    await admin('post', `/admin/apps/${a.app_id}/enable`).expect(200);
    expect((await userinfo(access)).status).toBe(200);
  });

  it('a rotated client secret: the old one is refused at once', async () => {
    const a = await createApp(h);
    const u = await createUser(h);
    const { access } = await signIn(a, u);
    expect((await introspect(a, access)).body.active).toBe(true);
    const rotated = await admin('post', `/admin/apps/${a.app_id}/rotate-secret`).expect(200);
    expect((await introspect(a, access)).status).toBe(401);
    expect(
      (await introspect({ app_id: a.app_id, client_secret: rotated.body.client_secret }, access)).body.active,
    ).toBe(true);
  });

  it('an updated user: /userinfo shows the change at once', async () => {
    const a = await createApp(h);
    const u = await createUser(h);
    const { access } = await signIn(a, u);
    expect((await userinfo(access)).body).toMatchObject({
      name: 'Ada Lovelace',
      'http://localhost:4000/v1': { verification_level: 'orb' },
    });
    const updated = await admin('patch', `/admin/users/${u.user_id}`).send({
      verification_level: 'device',
      name: 'Ada King',
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      user_id: u.user_id,
      username: u.username,
      verification_level: 'device',
      name: 'Ada King',
      given_name: 'Ada',
      disabled: false,
    });
    const info = await userinfo(access);
    expect(info.body).toMatchObject({
      name: 'Ada King',
      given_name: 'Ada',
      'http://localhost:4000/v1': { verification_level: 'device' },
    });
    expect((await admin('patch', '/admin/users/usr_missing').send({ name: 'x' })).status).toBe(404);
    expect((await admin('patch', `/admin/users/${u.user_id}`).send({})).status).toBe(400);
  });

  it('a withdrawn consent: tokens stop working and the next sign-in asks again', async () => {
    const a = await createApp(h);
    const u = await createUser(h);
    const { agent, access } = await signIn(a, u);
    expect((await userinfo(access)).status).toBe(200);
    const silent = { response_type: 'code', scope: 'openid profile', client_id: a.app_id, redirect_uri: REDIRECT_URI };
    expect((await agent.get('/authorize').query(silent)).headers.location).toMatch(
      /^http:\/\/localhost:3000\/callback\?code=/,
    );

    await admin('delete', `/admin/users/${u.user_id}/consents/${a.app_id}`).expect(204);
    expect((await userinfo(access)).status).toBe(401);
    expect((await introspect(a, access)).body).toEqual({ active: false });
    expect((await agent.get('/authorize').query(silent)).headers.location).toMatch(/^\/consent\?interaction=/);
    expect((await admin('delete', `/admin/users/${u.user_id}/consents/${a.app_id}`)).status).toBe(404);
  });

  it('a revoked token is refused at once, although its verification was remembered', async () => {
    const a = await createApp(h);
    const u = await createUser(h);
    const agent = request.agent(h.publicApp);
    const res = await browserFlow(
      agent,
      { response_type: 'code', scope: 'openid', client_id: a.app_id, redirect_uri: REDIRECT_URI },
      u,
    );
    const code = callbackParams(res).code;
    const exchange = () =>
      request(h.publicApp)
        .post('/token')
        .set('Authorization', basic(a.app_id, a.client_secret))
        .type('form')
        .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    const access = (await exchange()).body.access_token as string;
    expect((await userinfo(access)).status).toBe(200);
    expect((await exchange()).body.code).toBe('invalid_grant');
    expect((await userinfo(access)).status).toBe(401);
    expect((await introspect(a, access)).body).toEqual({ active: false });
  });

  it('a rotated key: new tokens carry and verify with it, old ones still verify, JWKS lists both', async () => {
    const a = await createApp(h);
    const u = await createUser(h);
    const before = await signIn(a, u);
    const oldKid = jwt.decode(before.access, { complete: true })!.header.kid;
    const jwks = async () =>
      ((await request(h.publicApp).get('/jwks')).body.keys as { kid: string }[]).map((k) => k.kid);
    expect(await jwks()).toContain(oldKid);

    const rotated = await admin('post', '/admin/keys/rotate');
    expect(rotated.status).toBe(200);
    expect(rotated.body.retired).toBe(oldKid);
    expect(rotated.body.kid).toMatch(/^jwk_[0-9a-f]{32}$/);
    expect(await jwks()).toEqual(expect.arrayContaining([oldKid, rotated.body.kid]));

    const after = await signIn(a, u);
    expect(jwt.decode(after.access, { complete: true })!.header.kid).toBe(rotated.body.kid);
    expect((await userinfo(after.access)).status).toBe(200);
    expect((await userinfo(before.access)).status).toBe(200);
  });

  it('a silent sign-in (signed in, consented) writes nothing to the database and parks no interaction', async () => {
    const a = await createApp(h);
    const u = await createUser(h);
    const { agent } = await signIn(a, u, 'openid');
    const query = { response_type: 'code', scope: 'openid', client_id: a.app_id, redirect_uri: REDIRECT_URI };
    expect((await agent.get('/authorize').query(query)).headers.location).toMatch(/\?code=/);

    // the back-channel logout worker polls its outbox on a timer, whatever requests come in: paused
    // here so that only the request's own statements are counted (under load a poll fell in the window)
    await h.ctx.signin.backChannelLogout.stop();
    const statements: string[] = [];
    const db = h.storage.db;
    const original = db.query.bind(db);
    const spy = jest.spyOn(db, 'query').mockImplementation((text: string, params?: unknown[]) => {
      statements.push(text);
      return original(text, params);
    });
    const parked = jest.spyOn(h.ctx.oauth.interactions, 'create');
    try {
      const res = await agent.get('/authorize').query(query);
      expect(res.status).toBe(302);
      expect(callbackParams(res).code).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      spy.mockRestore();
      h.ctx.signin.backChannelLogout.start();
    }
    expect(statements.filter((s) => /^\s*(INSERT|UPDATE|DELETE)/i.test(s))).toEqual([]);
    expect(parked).not.toHaveBeenCalled();
    parked.mockRestore();
  });
});
