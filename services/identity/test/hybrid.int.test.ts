import { createHash } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import {
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  hidden,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

const half = (value: string) => createHash('sha256').update(value).digest().subarray(0, 16).toString('base64url');

describe('hybrid flows, login_hint and cookies', () => {
  let h: IdentityHarness;
  let app: { app_id: string; client_secret: string };
  let user: { username: string; password: string };
  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h);
    user = await createUser(h);
  });
  afterAll(() => h.close());

  const base = { scope: 'openid', redirect_uri: REDIRECT_URI, state: 's', nonce: 'n' };

  it('code token: code and access token in the fragment', async () => {
    const res = await browserFlow(
      request.agent(h.publicApp),
      { ...base, client_id: app.app_id, response_type: 'code token' },
      user,
    );
    const params = callbackParams(res);
    expect(Object.keys(params).sort()).toEqual(['access_token', 'code', 'expires_in', 'iss', 'state', 'token_type']);
    expect(new URL(res.headers.location).hash).not.toBe('');
  });

  it('code id_token token: the id_token binds both with c_hash and at_hash, and carries nonce and auth_time', async () => {
    const res = await browserFlow(
      request.agent(h.publicApp),
      { ...base, client_id: app.app_id, response_type: 'code id_token token' },
      user,
    );
    const params = callbackParams(res);
    expect(Object.keys(params).sort()).toEqual([
      'access_token',
      'code',
      'expires_in',
      'id_token',
      'iss',
      'state',
      'token_type',
    ]);
    const claims = jwt.decode(params.id_token) as Record<string, unknown>;
    expect(claims.c_hash).toBe(half(params.code));
    expect(claims.at_hash).toBe(half(params.access_token));
    expect(claims.nonce).toBe('n');
    expect(typeof claims.auth_time).toBe('number');
    expect(claims.aud).toBe(app.app_id);
  });

  it('id_token alone (implicit): no access token, no at_hash', async () => {
    const res = await browserFlow(
      request.agent(h.publicApp),
      { ...base, client_id: app.app_id, response_type: 'id_token' },
      user,
    );
    const params = callbackParams(res);
    expect(Object.keys(params).sort()).toEqual(['id_token', 'iss', 'state']);
    expect((jwt.decode(params.id_token) as Record<string, unknown>).at_hash).toBeUndefined();
  });

  it('pre-fills the username from login_hint, escaped', async () => {
    const agent = request.agent(h.publicApp);
    const start = await agent
      .get('/authorize')
      .query({ ...base, client_id: app.app_id, response_type: 'code', login_hint: 'al"ice<' });
    const page = await agent.get(start.headers.location);
    expect(page.text).toContain('value="al&quot;ice&lt;"');
    expect(hidden(page.text, 'interaction')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('marks cookies Secure (and __Host-) when BASE_URL is https', async () => {
    const secure = await identityHarness({ BASE_URL: 'https://id.example.com' });
    try {
      const a = await createApp(secure);
      const u = await createUser(secure);
      const agent = request.agent(secure.publicApp);
      const start = await agent
        .get('/authorize')
        .query({ response_type: 'code', scope: 'openid', client_id: a.app_id, redirect_uri: REDIRECT_URI });
      const csrf = (start.headers['set-cookie'] as unknown as string[]).find((c) =>
        c.startsWith('__Host-attest_csrf='),
      )!;
      expect(csrf).toMatch(/; Secure/);
      // over plain http the agent keeps Secure cookies to itself: send the one /authorize bound the sign-in to
      const page = await agent.get(start.headers.location).set('Cookie', csrf.split(';')[0]);
      const signin = await request(secure.publicApp)
        .post('/signin')
        .set('Cookie', csrf.split(';')[0])
        .type('form')
        .send({
          interaction: hidden(page.text, 'interaction'),
          csrf: hidden(page.text, 'csrf'),
          username: u.username,
          password: u.password,
        });
      const session = (signin.headers['set-cookie'] as unknown as string[]).find((c) =>
        c.startsWith('__Host-attest_session='),
      )!;
      expect(session).toMatch(/; Secure/);
      expect(session).toMatch(/HttpOnly/);
      const discovery = await request(secure.publicApp).get('/.well-known/openid-configuration');
      expect(discovery.body.issuer).toBe('https://id.example.com');
    } finally {
      await secure.close();
    }
  });
});
