import { createHash, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import {
  basic,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

describe('POST /token', () => {
  let h: IdentityHarness;
  let app: { app_id: string; client_secret: string };
  let other: { app_id: string; client_secret: string };
  let user: { username: string; password: string };
  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h);
    other = await createApp(h);
    user = await createUser(h);
  });
  afterAll(() => h.close());

  async function code(extra: Record<string, string> = {}): Promise<string> {
    const agent = request.agent(h.publicApp);
    const res = await browserFlow(
      agent,
      {
        response_type: 'code',
        scope: 'openid email profile',
        client_id: app.app_id,
        redirect_uri: REDIRECT_URI,
        nonce: 'nonce-1',
        ...extra,
      },
      user,
    );
    return callbackParams(res).code;
  }

  const token = (body: Record<string, string>, auth = basic(app.app_id, app.client_secret)) =>
    request(h.publicApp).post('/token').set('Authorization', auth).type('form').send(body);

  it('exchanges a code for the SPEC 2.2 token response, no-store', async () => {
    const res = await token({ grant_type: 'authorization_code', code: await code(), redirect_uri: REDIRECT_URI });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'id_token', 'scope', 'token_type']);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid email profile' });
    const access = jwt.decode(res.body.access_token, { complete: true })!;
    expect(access.header).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
    expect(access.header.kid).toMatch(/^jwk_[0-9a-f]{32}$/);
    expect(access.payload).toMatchObject({
      iss: 'http://localhost:4000',
      client_id: app.app_id,
      scope: 'openid email profile',
    });
    const id = jwt.decode(res.body.id_token, { complete: true })!;
    expect(id.header).toMatchObject({ alg: 'RS256', typ: 'JWT' });
    const claims = id.payload as Record<string, unknown>;
    expect(claims).toMatchObject({
      iss: 'http://localhost:4000',
      aud: app.app_id,
      nonce: 'nonce-1',
      name: 'Ada Lovelace',
      given_name: 'Ada',
      family_name: 'Lovelace',
    });
    expect(claims.sub).toMatch(/^0x[0-9a-f]{64}$/);
    expect(claims.email).toBe(`${claims.sub}@localhost`);
    expect(claims['http://localhost:4000/v1']).toEqual({ verification_level: 'orb' });
    expect(claims['http://localhost:4000/beta']).toEqual({ likely_human: 'strong', credential_type: 'orb' });
    expect(typeof claims.auth_time).toBe('number');
    const digest = createHash('sha256').update(res.body.access_token).digest();
    expect(claims.at_hash).toBe(digest.subarray(0, 16).toString('base64url'));
  });

  describe('SPEC 4.3 errors, in its check order', () => {
    it('405 method_not_allowed with the OAuth pair', async () => {
      const res = await request(h.publicApp).get('/token');
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST, OPTIONS');
      expect(res.body).toEqual({
        code: 'method_not_allowed',
        detail: "HTTP method 'GET' is not allowed for this endpoint.",
        attribute: null,
        error: 'invalid_request',
        error_description: "HTTP method 'GET' is not allowed for this endpoint.",
      });
    });

    it('400 invalid_content_type (before credentials are looked at)', async () => {
      const res = await request(h.publicApp)
        .post('/token')
        .set('Authorization', 'Basic bad')
        .send({ grant_type: 'authorization_code' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_content_type', attribute: null, error: 'invalid_request' });
    });

    it('accepts a charset parameter on the content type', async () => {
      const res = await request(h.publicApp)
        .post('/token')
        .set('Content-Type', 'application/x-www-form-urlencoded; charset=UTF-8')
        .set('Authorization', basic(app.app_id, app.client_secret))
        .send(`grant_type=authorization_code&code=${await code()}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`);
      expect(res.status).toBe(200);
    });

    it('401 unauthenticated: missing, wrong, or other-app credentials', async () => {
      const none = await request(h.publicApp)
        .post('/token')
        .type('form')
        .send({ grant_type: 'authorization_code', code: 'x' });
      expect(none.status).toBe(401);
      expect(none.headers['www-authenticate']).toMatch(/^Basic/);
      expect(none.body).toEqual({
        code: 'unauthenticated',
        detail: 'Please provide your app authentication credentials.',
        attribute: null,
        error: 'invalid_client',
        error_description: 'Please provide your app authentication credentials.',
      });
      const wrong = await token({ grant_type: 'nope' }, basic(app.app_id, `sk_${'0'.repeat(48)}`));
      expect(wrong.status).toBe(401);
      expect(wrong.body).toMatchObject({
        code: 'unauthenticated',
        detail: 'Invalid authentication credentials.',
        error: 'invalid_client',
      });
      const mixed = await token({ grant_type: 'nope' }, basic(app.app_id, other.client_secret));
      expect(mixed.status).toBe(401);
    });

    it('400 invalid_grant_type (also when absent)', async () => {
      for (const body of [{ grant_type: 'password', code: 'x' }, { code: 'x' }]) {
        const res = await token(body as Record<string, string>);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          code: 'invalid_grant_type',
          detail:
            'Invalid grant type. Supported: authorization_code, refresh_token, client_credentials, ' +
            'urn:ietf:params:oauth:grant-type:device_code, urn:ietf:params:oauth:grant-type:token-exchange.',
          attribute: 'grant_type',
          error: 'unsupported_grant_type',
          error_description:
            'Invalid grant type. Supported: authorization_code, refresh_token, client_credentials, ' +
            'urn:ietf:params:oauth:grant-type:device_code, urn:ietf:params:oauth:grant-type:token-exchange.',
        });
      }
    });

    it('400 required for code, then for redirect_uri', async () => {
      const noCode = await token({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI });
      expect(noCode.status).toBe(400);
      expect(noCode.body).toMatchObject({
        code: 'required',
        detail: 'This attribute is required.',
        attribute: 'code',
        error: 'invalid_request',
      });
      const noRedirect = await token({ grant_type: 'authorization_code', code: 'abc' });
      expect(noRedirect.body).toMatchObject({ code: 'required', attribute: 'redirect_uri' });
    });

    it('400 invalid_grant for an unknown code, another app’s code, or a different redirect_uri', async () => {
      const unknown = await token({
        grant_type: 'authorization_code',
        code: randomBytes(32).toString('hex'),
        redirect_uri: REDIRECT_URI,
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toEqual({
        code: 'invalid_grant',
        detail: 'Invalid authorization code.',
        attribute: 'code',
        error: 'invalid_grant',
        error_description: 'Invalid authorization code.',
      });
      const stolen = await token(
        { grant_type: 'authorization_code', code: await code(), redirect_uri: REDIRECT_URI },
        basic(other.app_id, other.client_secret),
      );
      expect(stolen.body.code).toBe('invalid_grant');
      const moved = await token({
        grant_type: 'authorization_code',
        code: await code(),
        redirect_uri: 'http://localhost:3000/elsewhere',
      });
      expect(moved.body).toMatchObject({ code: 'invalid_grant', attribute: 'redirect_uri' });
    });
  });

  it('accepts client_secret_post', async () => {
    const res = await request(h.publicApp)
      .post('/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: await code(),
        redirect_uri: REDIRECT_URI,
        client_id: app.app_id,
        client_secret: app.client_secret,
      });
    expect(res.status).toBe(200);
  });

  it('is answered before the router (the fast path), its answers and OAuth errors as before', async () => {
    const router = (h.publicApp as unknown as { router: { handle: (...args: unknown[]) => unknown } }).router;
    const spy = jest.spyOn(router, 'handle');
    try {
      const ok = await token({ grant_type: 'authorization_code', code: await code(), redirect_uri: REDIRECT_URI });
      const calls = spy.mock.calls.length;
      expect(ok.status).toBe(200);
      expect(ok.body.token_type).toBe('Bearer');
      // an error of a step (the code), of the credentials (with their challenge) and of the form parser
      const unknown = await token({ grant_type: 'authorization_code', code: 'nope', redirect_uri: REDIRECT_URI });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ code: 'invalid_grant', error: 'invalid_grant', attribute: 'code' });
      expect(unknown.body.error_description).toBe(unknown.body.detail);
      expect(unknown.headers['cache-control']).toBe('no-store');
      expect(unknown.headers.pragma).toBe('no-cache');
      const wrong = await token({ grant_type: 'client_credentials' }, basic(app.app_id, 'sk_wrong'));
      expect(wrong.status).toBe(401);
      expect(wrong.body).toMatchObject({ code: 'unauthenticated', error: 'invalid_client' });
      expect(wrong.headers['www-authenticate']).toMatch(/^Basic /);
      const huge = await token({ grant_type: 'authorization_code', code: 'x'.repeat(200_000) });
      expect(huge.status).toBe(413);
      expect(huge.body).toMatchObject({ code: 'payload_too_large', error: 'invalid_request' });
      // only the browser flow's requests for the code went through the router
      expect(spy.mock.calls.length).toBe(calls);
    } finally {
      spy.mockRestore();
    }
  });

  it('a code expires after CODE_TTL_SECONDS', async () => {
    const short = await identityHarness({ CODE_TTL_SECONDS: '5' });
    try {
      const a = await createApp(short);
      const u = await createUser(short);
      const res = await browserFlow(
        request.agent(short.publicApp),
        { response_type: 'code', scope: 'openid', client_id: a.app_id, redirect_uri: REDIRECT_URI },
        u,
      );
      const c = callbackParams(res).code;
      const realNow = Date.now;
      // The in-process cache reads Date.now; with Redis the TTL is the server's, so wait it out there.
      if (short.storage.cache.mode === 'memory') Date.now = () => realNow() + 6000;
      else await new Promise((r) => setTimeout(r, 5200));
      try {
        const late = await request(short.publicApp)
          .post('/token')
          .set('Authorization', basic(a.app_id, a.client_secret))
          .type('form')
          .send({ grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT_URI });
        expect(late.body.code).toBe('invalid_grant');
      } finally {
        Date.now = realNow;
      }
    } finally {
      await short.close();
    }
  }, 90000);

  it('a code is single use; a replay fails and revokes the tokens it gave', async () => {
    const c = await code();
    const first = await token({ grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT_URI });
    expect(first.status).toBe(200);
    const introspect = () =>
      request(h.publicApp)
        .post('/introspect')
        .set('Authorization', basic(app.app_id, app.client_secret))
        .type('form')
        .send({ token: first.body.access_token });
    expect((await introspect()).body.active).toBe(true);
    const replay = await token({ grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT_URI });
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe('invalid_grant');
    expect((await introspect()).body).toEqual({ active: false });
    const info = await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${first.body.access_token}`);
    expect(info.status).toBe(401);
  });

  it('of two concurrent exchanges of one code, exactly one succeeds', async () => {
    const c = await code();
    const results = await Promise.all(
      Array.from({ length: 5 }, () => token({ grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT_URI })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400 && r.body.code === 'invalid_grant')).toHaveLength(4);
  });

  describe('PKCE (S256)', () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');

    it('succeeds with the right verifier', async () => {
      const c = await code({ code_challenge: challenge, code_challenge_method: 'S256' });
      const res = await token({
        grant_type: 'authorization_code',
        code: c,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      });
      expect(res.status).toBe(200);
    });

    it('fails with a wrong or missing verifier', async () => {
      const wrong = await token({
        grant_type: 'authorization_code',
        code: await code({ code_challenge: challenge, code_challenge_method: 'S256' }),
        redirect_uri: REDIRECT_URI,
        code_verifier: randomBytes(32).toString('base64url'),
      });
      expect(wrong.body).toMatchObject({ code: 'invalid_grant', attribute: 'code_verifier' });
      const missing = await token({
        grant_type: 'authorization_code',
        code: await code({ code_challenge: challenge, code_challenge_method: 'S256' }),
        redirect_uri: REDIRECT_URI,
      });
      expect(missing.status).toBe(400);
      expect(missing.body.attribute).toBe('code_verifier');
    });

    it('refuses a downgrade: a verifier for a code issued without a challenge', async () => {
      const res = await token({
        grant_type: 'authorization_code',
        code: await code(),
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      });
      expect(res.body).toMatchObject({ code: 'invalid_grant', attribute: 'code_verifier' });
    });
  });
});
