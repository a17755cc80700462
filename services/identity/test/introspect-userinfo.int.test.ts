import jwt from 'jsonwebtoken';
import request from 'supertest';
import { generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
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

describe('POST /introspect and /userinfo', () => {
  let h: IdentityHarness;
  let app: { app_id: string; client_secret: string };
  let other: { app_id: string; client_secret: string };
  let user: { username: string; password: string };
  let tokens: { access_token: string; id_token: string };

  async function tokensFor(a: { app_id: string; client_secret: string }, scope: string, u = user) {
    const res = await browserFlow(
      request.agent(h.publicApp),
      { response_type: 'code', scope, client_id: a.app_id, redirect_uri: REDIRECT_URI },
      u,
    );
    const t = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(a.app_id, a.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code: callbackParams(res).code, redirect_uri: REDIRECT_URI });
    return t.body as { access_token: string; id_token: string };
  }

  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h);
    other = await createApp(h);
    user = await createUser(h);
    tokens = await tokensFor(app, 'openid email');
  });
  afterAll(() => h.close());

  const introspect = (body: Record<string, string>, auth: string | null = basic(app.app_id, app.client_secret)) => {
    const req = request(h.publicApp).post('/introspect').type('form');
    if (auth) req.set('Authorization', auth);
    return req.send(body);
  };

  describe('introspection', () => {
    it('answers SPEC 2.3 for an active token of this app', async () => {
      const res = await introspect({ token: tokens.access_token });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        active: true,
        client_id: app.app_id,
        scope: 'openid email',
        token_type: 'Bearer',
      });
      expect(res.body.sub).toMatch(/^0x[0-9a-f]{64}$/);
      expect(res.body.exp - res.body.iat).toBe(3600);
    });

    it('follows SPEC 4.4 check order and errors', async () => {
      const get = await request(h.publicApp).get('/introspect');
      expect(get.status).toBe(405);
      expect(get.body.code).toBe('method_not_allowed');
      expect((await request(h.publicApp).options('/introspect')).status).toBe(405);
      const json = await request(h.publicApp).post('/introspect').send({ token: 'x' });
      expect(json.body).toMatchObject({ code: 'invalid_content_type' });
      const noToken = await introspect({}, null);
      expect(noToken.status).toBe(400);
      expect(noToken.body).toEqual({ code: 'required', detail: 'This attribute is required.', attribute: 'token' });
      const noAuth = await introspect({ token: tokens.access_token }, null);
      expect(noAuth.status).toBe(401);
      expect(noAuth.body.code).toBe('unauthenticated');
      const badAuth = await introspect({ token: tokens.access_token }, basic(app.app_id, 'sk_wrong'));
      expect(badAuth.status).toBe(401);
      expect(badAuth.body).toMatchObject({ code: 'unauthenticated', detail: 'Invalid authentication credentials.' });
    });

    it('401 invalid_token for malformed, forged and expired tokens, and for an id_token', async () => {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const kid = jwt.decode(tokens.access_token, { complete: true })!.header.kid;
      const forged = jwt.sign(
        { iss: 'http://localhost:4000', client_id: app.app_id, jti: 'x', sub: '0x1', scope: 'openid' },
        privateKey,
        { algorithm: 'RS256', keyid: kid, header: { alg: 'RS256', typ: 'at+jwt' } },
      );
      for (const token of ['not-a-jwt', forged, tokens.id_token]) {
        const res = await introspect({ token });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ code: 'invalid_token', detail: 'Token is invalid or expired.', attribute: 'token' });
      }
    });

    it('401 invalid_token for tokens signed with our own key that break a rule: alg, exp, nbf, iss, typ, payload', async () => {
      const { kid, privateKey } = await h.ctx.tokens.keys.signingKey('RS256');
      const claims = jwt.decode(tokens.access_token) as Record<string, unknown>;
      const now = Math.floor(Date.now() / 1000);
      // signed by hand (jsonwebtoken would refuse to sign some of these claims)
      const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const sign = (payload: Record<string, unknown>, header: Record<string, unknown> = {}) => {
        const input = `${part({ alg: 'RS256', typ: 'at+jwt', kid, ...header })}.${part(payload)}`;
        return `${input}.${cryptoSign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
      };
      // the real claims, re-signed: accepted (so each refusal below is for its one broken rule)
      const resigned = await introspect({ token: sign(claims) });
      expect(resigned.status).toBe(200);
      expect(resigned.body.active).toBe(true);
      const [head, body] = sign(claims).split('.');
      const tampered = `${head}.${Buffer.from(JSON.stringify({ ...claims, scope: 'openid email profile' })).toString('base64url')}.${sign(claims).split('.')[2]}`;
      for (const token of [
        sign({ ...claims, exp: now - 1 }),
        sign({ ...claims, exp: String(now + 600) }),
        sign({ ...claims, nbf: now + 600 }),
        sign({ ...claims, iss: 'https://elsewhere.example' }),
        sign(claims, { typ: 'JWT' }),
        sign(claims, { kid: undefined }),
        `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid })).toString('base64url')}.${body}.`,
        `${head}.${body}.`,
        tampered,
      ]) {
        const res = await introspect({ token });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ code: 'invalid_token', detail: 'Token is invalid or expired.', attribute: 'token' });
        const info = await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${token}`);
        expect(info.status).toBe(401);
      }
    });

    it('{"active": false} for a token of another app (tokens are bound to their app)', async () => {
      const res = await introspect({ token: tokens.access_token }, basic(other.app_id, other.client_secret));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ active: false });
    });
  });

  describe('userinfo', () => {
    it('answers SPEC 2.4 limited to the granted scopes, on GET and POST', async () => {
      for (const method of ['get', 'post'] as const) {
        const res = await request(h.publicApp)
          [method]('/userinfo')
          .set('Authorization', `Bearer ${tokens.access_token}`);
        expect(res.status).toBe(200);
        expect(res.headers['access-control-allow-origin']).toBe('*');
        const sub = res.body.sub as string;
        expect(res.body).toEqual({
          sub,
          'http://localhost:4000/beta': { likely_human: 'strong', credential_type: 'orb' },
          'http://localhost:4000/v1': { verification_level: 'orb' },
          email: `${sub}@localhost`,
        });
      }
      const profile = await tokensFor(app, 'openid profile');
      const res = await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${profile.access_token}`);
      expect(res.body).toMatchObject({ name: 'Ada Lovelace', given_name: 'Ada', family_name: 'Lovelace' });
      expect(res.body.email).toBeUndefined();
    });

    it('gives a device-verified user weak likelihood and a pairwise sub per app', async () => {
      const device = await createUser(h, { verification_level: 'device' });
      const a = await tokensFor(app, 'openid', device);
      const b = await tokensFor(other, 'openid', device);
      const ia = (await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${a.access_token}`)).body;
      const ib = (await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${b.access_token}`)).body;
      expect(ia['http://localhost:4000/v1']).toEqual({ verification_level: 'device' });
      expect(ia['http://localhost:4000/beta']).toEqual({ likely_human: 'weak', credential_type: 'device' });
      expect(ia.sub).not.toBe(ib.sub);
      const again = await tokensFor(app, 'openid', device);
      expect(
        (await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${again.access_token}`)).body.sub,
      ).toBe(ia.sub);
    });

    it('answers the CORS preflight allowing the Authorization header', async () => {
      const res = await request(h.publicApp)
        .options('/userinfo')
        .set('Origin', 'https://app.example')
        .set('Access-Control-Request-Method', 'GET')
        .set('Access-Control-Request-Headers', 'authorization');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-headers']).toMatch(/Authorization/);
    });

    it('401 unauthenticated without a header; 401 invalid_token for a bad token or an id_token', async () => {
      const none = await request(h.publicApp).get('/userinfo');
      expect(none.status).toBe(401);
      expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(none.body).toEqual({ code: 'unauthenticated', detail: 'Missing credentials.', attribute: null });
      for (const token of ['garbage', tokens.id_token]) {
        const res = await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${token}`);
        expect(res.status).toBe(401);
        expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
        expect(res.body).toEqual({ code: 'invalid_token', detail: 'Token is invalid or expired.', attribute: 'token' });
      }
      expect((await request(h.publicApp).delete('/userinfo')).status).toBe(405);
    });

    it('stops serving a disabled app’s tokens', async () => {
      const a = await createApp(h);
      const t = await tokensFor(a, 'openid');
      expect(
        (await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${t.access_token}`)).status,
      ).toBe(200);
      await request(h.adminApp)
        .post(`/admin/apps/${a.app_id}/disable`)
        .set('Authorization', 'Bearer test-admin-token-0123456789abcdef')
        .expect(200);
      expect(
        (await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${t.access_token}`)).status,
      ).toBe(401);
    });
  });
});
