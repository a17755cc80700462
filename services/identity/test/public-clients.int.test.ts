import { createHash, randomBytes } from 'node:crypto';
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

const ORIGIN = 'http://localhost:3000';

describe('public clients (token_endpoint_auth_method none)', () => {
  let h: IdentityHarness;
  let spa: { app_id: string };
  let user: { username: string; password: string };
  const admin = () => request(h.adminApp);
  beforeAll(async () => {
    h = await identityHarness();
    const res = await admin()
      .post('/admin/apps')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ name: 'SPA', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', web_origins: [ORIGIN] });
    expect(res.status).toBe(201);
    spa = res.body;
    user = await createUser(h);
  });
  afterAll(() => h.close());

  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const authorize = (extra: Record<string, string> = {}) =>
    browserFlow(
      request.agent(h.publicApp),
      {
        response_type: 'code',
        scope: 'openid',
        client_id: spa.app_id,
        redirect_uri: REDIRECT_URI,
        state: 's1',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        ...extra,
      },
      user,
    );
  const token = (body: Record<string, string>) =>
    request(h.publicApp)
      .post('/token')
      .set('Origin', ORIGIN)
      .type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, client_id: spa.app_id, ...body });

  it('is created without a secret and stored as such', async () => {
    expect(spa).toMatchObject({ token_endpoint_auth_method: 'none', web_origins: [ORIGIN] });
    expect(spa).not.toHaveProperty('client_secret');
    const [row] = await h.storage.db.query<{
      secret_hash: string | null;
      token_endpoint_auth_method: string;
      web_origins: string[];
    }>('SELECT secret_hash, token_endpoint_auth_method, web_origins FROM apps WHERE id = $1', [spa.app_id]);
    expect(row).toEqual({ secret_hash: null, token_endpoint_auth_method: 'none', web_origins: [ORIGIN] });
    const rotate = await admin()
      .post(`/admin/apps/${spa.app_id}/rotate-secret`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(rotate.status).toBe(409);
    expect(rotate.body.code).toBe('public_client');
  });

  it('exchanges a code with client_id and the PKCE verifier, with CORS for its web origin', async () => {
    const { code, state } = callbackParams(await authorize());
    expect(state).toBe('s1');
    const res = await token({ code, code_verifier: verifier });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'openid' });
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(res.headers.vary).toMatch(/Origin/);
    const info = await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${res.body.access_token}`);
    expect(info.status).toBe(200);
  });

  it('an error is readable by the page too; without the verifier the exchange is refused', async () => {
    const { code } = callbackParams(await authorize());
    const res = await token({ code });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'required', attribute: 'code_verifier', error: 'invalid_request' });
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
  });

  it('no CORS for an origin the app did not register', async () => {
    const { code } = callbackParams(await authorize());
    const res = await request(h.publicApp).post('/token').set('Origin', 'http://localhost:9999').type('form').send({
      grant_type: 'authorization_code',
      redirect_uri: REDIRECT_URI,
      client_id: spa.app_id,
      code,
      code_verifier: verifier,
    });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers a preflight for a registered origin only', async () => {
    const ok = await request(h.publicApp)
      .options('/token')
      .set('Origin', ORIGIN)
      .set('Access-Control-Request-Method', 'POST');
    expect(ok.status).toBe(204);
    expect(ok.headers).toMatchObject({ 'access-control-allow-origin': ORIGIN, 'access-control-allow-methods': 'POST' });
    const other = await request(h.publicApp)
      .options('/token')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'POST');
    expect(other.status).toBe(204);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('authorize: a public client must use the code flow with PKCE', async () => {
    const noPkce = callbackParams(await authorize({ code_challenge: '', code_challenge_method: '' }));
    expect(noPkce).toMatchObject({ error: 'invalid_request', state: 's1' });
    const {
      code_challenge: _c,
      code_challenge_method: _m,
      ...withoutPkce
    } = {
      response_type: 'code',
      scope: 'openid',
      client_id: spa.app_id,
      redirect_uri: REDIRECT_URI,
      state: 's2',
      code_challenge: '',
      code_challenge_method: '',
    };
    const res = await request(h.publicApp).get('/authorize').query(withoutPkce);
    expect(res.status).toBe(302);
    expect(Object.fromEntries(new URL(res.headers.location).searchParams)).toMatchObject({
      error: 'invalid_request',
      state: 's2',
    });
    const implicit = await request(h.publicApp)
      .get('/authorize')
      .query({ ...withoutPkce, response_type: 'id_token', nonce: 'n' });
    expect(implicit.status).toBe(302);
    expect(Object.fromEntries(new URLSearchParams(new URL(implicit.headers.location).hash.slice(1)))).toMatchObject({
      error: 'unauthorized_client',
    });
  });

  it('cannot authenticate with a secret, and cannot introspect', async () => {
    const withSecret = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(spa.app_id, 'sk_unknown-app'))
      .type('form')
      .send({ grant_type: 'authorization_code', code: '0'.repeat(64), redirect_uri: REDIRECT_URI });
    expect(withSecret.status).toBe(401);
    const introspect = await request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(spa.app_id, 'sk_unknown-app'))
      .type('form')
      .send({ token: 'x' });
    expect(introspect.status).toBe(401);
  });

  it('a confidential app still needs its secret: client_id alone is unauthenticated', async () => {
    const confidential = await createApp(h);
    const res = await request(h.publicApp)
      .post('/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        client_id: confidential.app_id,
        code: '0'.repeat(64),
        redirect_uri: REDIRECT_URI,
      });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'unauthenticated', error: 'invalid_client' });
  });

  it('discovery lists none among the token endpoint auth methods', async () => {
    const res = await request(h.publicApp).get('/.well-known/openid-configuration');
    expect(res.body.token_endpoint_auth_methods_supported).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'private_key_jwt',
      'none',
    ]);
  });

  it('refuses a web origin with a path, or plain http off loopback', async () => {
    for (const origin of ['https://app.example.com/', 'http://app.example.com']) {
      const res = await admin()
        .post('/admin/apps')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({ name: 'x', redirect_uris: [REDIRECT_URI], web_origins: [origin] });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_parameter', attribute: 'web_origins.0' });
    }
  });
});
