import request from 'supertest';
import {
  basic,
  BASE_URL,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

describe('POST /revoke (RFC 7009)', () => {
  let h: IdentityHarness;
  let app: { app_id: string; client_secret: string };
  let other: { app_id: string; client_secret: string };
  let user: { username: string; password: string };

  async function accessToken(a: { app_id: string; client_secret: string }): Promise<string> {
    const res = await browserFlow(
      request.agent(h.publicApp),
      { response_type: 'code', scope: 'openid', client_id: a.app_id, redirect_uri: REDIRECT_URI },
      user,
    );
    const t = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(a.app_id, a.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code: callbackParams(res).code, redirect_uri: REDIRECT_URI });
    expect(t.status).toBe(200);
    return t.body.access_token as string;
  }

  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h);
    other = await createApp(h);
    user = await createUser(h);
  });
  afterAll(() => h.close());

  const revoke = (
    body: Record<string, string>,
    auth: string | null = basic(app.app_id, app.client_secret),
    target = h,
  ) => {
    const req = request(target.publicApp).post('/revoke').type('form');
    if (auth) req.set('Authorization', auth);
    return req.send(body);
  };
  const introspect = (token: string, a = app, target = h) =>
    request(target.publicApp)
      .post('/introspect')
      .set('Authorization', basic(a.app_id, a.client_secret))
      .type('form')
      .send({ token });
  const userinfo = (token: string, target = h) =>
    request(target.publicApp).get('/userinfo').set('Authorization', `Bearer ${token}`);

  it('is advertised in discovery', async () => {
    const res = await request(h.publicApp).get('/.well-known/openid-configuration');
    expect(res.body).toMatchObject({
      revocation_endpoint: `${BASE_URL}/revoke`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt', 'none'],
    });
  });

  it('authenticates the app as /introspect does, and answers 200 with nothing to say for unknown or malformed tokens', async () => {
    const missing = await revoke({}, null);
    expect([missing.status, missing.body]).toEqual([
      400,
      { code: 'required', detail: 'This attribute is required.', attribute: 'token' },
    ]);
    expect((await revoke({ token: 'x' }, null)).body.code).toBe('unauthenticated');
    const wrong = await revoke({ token: 'x' }, basic(app.app_id, 'sk_wrong'));
    expect([wrong.status, wrong.body.code]).toEqual([401, 'unauthenticated']);
    // counted against the failure limits, like /introspect
    expect(wrong.headers['ratelimit-policy']).toEqual(expect.any(String));
    expect(wrong.headers.ratelimit).toEqual(expect.any(String));
    expect((await request(h.publicApp).get('/revoke')).status).toBe(405);
    expect(
      (
        await request(h.publicApp)
          .post('/revoke')
          .set('Authorization', basic(app.app_id, app.client_secret))
          .send({ token: 'x' })
      ).body.code,
    ).toBe('invalid_content_type');

    for (const token of ['not-a-token', 'a.b.c', 'e'.repeat(64)]) {
      const res = await revoke({ token, token_type_hint: 'access_token' });
      expect([res.status, res.text, res.headers['cache-control']]).toEqual([200, '', 'no-store']);
    }
  });

  it("another app's token: 200, and it stays active", async () => {
    const theirs = await accessToken(other);
    const res = await revoke({ token: theirs });
    expect(res.status).toBe(200);
    expect((await introspect(theirs, other)).body.active).toBe(true);
    expect((await userinfo(theirs)).status).toBe(200);
  });

  it('revokes its own token whatever the hint says: inactive at /introspect, refused at /userinfo, durably, on a new replica too', async () => {
    const token = await accessToken(app);
    expect((await introspect(token)).body.active).toBe(true);
    const res = await revoke({ token, token_type_hint: 'refresh_token' });
    expect([res.status, res.text]).toEqual([200, '']);

    expect((await introspect(token)).body).toEqual({ active: false });
    const info = await userinfo(token);
    expect(info.status).toBe(401);
    expect(info.headers['www-authenticate']).toContain('error="invalid_token"');
    const jti = (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { jti: string }).jti;
    expect(await h.storage.db.query('SELECT jti FROM revoked_tokens WHERE jti = $1', [jti])).toEqual([{ jti }]);

    // another replica, started afterwards on the same database, loads the revocation at start
    const replica = await identityHarness({}, { db: h.storage.db });
    try {
      expect((await introspect(token, app, replica)).body).toEqual({ active: false });
      expect((await userinfo(token, replica)).status).toBe(401);
    } finally {
      await replica.close();
    }
    // revoking again is harmless
    expect((await revoke({ token })).status).toBe(200);
  });
});
