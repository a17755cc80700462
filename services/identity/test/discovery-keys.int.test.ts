import request from 'supertest';
import { testLogger } from '@attest/testing';
import { SigningKeys } from '../src/kernel/signing-keys';
import { keyStore } from '../src/kernel/key-store';
import { ADMIN_TOKEN, identityHarness, type IdentityHarness } from './support';

describe('discovery, JWKS and signing keys', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    h = await identityHarness();
  });
  afterAll(() => h.close());

  it('serves SPEC 2.1 exactly, plus the standard fields, cacheable with open CORS', async () => {
    const res = await request(h.publicApp).get('/.well-known/openid-configuration');
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cache-control']).toMatch(/max-age=\d+/);
    const b = 'http://localhost:4000';
    expect(res.body).toEqual({
      issuer: b,
      authorization_endpoint: `${b}/authorize`,
      token_endpoint: `${b}/token`,
      userinfo_endpoint: `${b}/userinfo`,
      jwks_uri: `${b}/jwks`,
      scopes_supported: ['openid', 'email', 'profile', 'offline_access'],
      response_types_supported: [
        'code',
        'id_token',
        'id_token token',
        'code id_token',
        'code token',
        'code id_token token',
      ],
      grant_types_supported: [
        'authorization_code',
        'implicit',
        'refresh_token',
        'client_credentials',
        // issue 42: CIBA
        'urn:openid:params:grant-type:ciba',
        // issue 41: the device flow (RFC 8628)
        'urn:ietf:params:oauth:grant-type:device_code',
        // issue 42: RFC 8693 token exchange
        'urn:ietf:params:oauth:grant-type:token-exchange',
      ],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RSA', 'RS256', 'PS256', 'ES256'],
      response_modes_supported: ['query', 'fragment', 'form_post'],
      code_challenge_methods_supported: ['S256'],
      dpop_signing_alg_values_supported: ['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
      token_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256'],
      introspection_endpoint: `${b}/introspect`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt'],
      introspection_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256'],
      revocation_endpoint: `${b}/revoke`,
      device_authorization_endpoint: `${b}/device_authorization`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt', 'none'],
      revocation_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256'],
      pushed_authorization_request_endpoint: `${b}/par`,
      require_pushed_authorization_requests: false,
      request_parameter_supported: true,
      request_uri_parameter_supported: false,
      request_object_signing_alg_values_supported: ['none', 'RS256', 'PS256', 'ES256'],
      authorization_response_iss_parameter_supported: true,
      end_session_endpoint: `${b}/logout`,
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
      frontchannel_logout_supported: false,
      acr_values_supported: ['urn:attest:loa:orb', 'urn:attest:loa:device'],
      // issue 42: CIBA (poll, ping) and the RFC 9396 types it understands
      backchannel_authentication_endpoint: `${b}/bc-authorize`,
      backchannel_token_delivery_modes_supported: ['poll', 'ping'],
      backchannel_user_code_parameter_supported: false,
      authorization_details_types_supported: ['payment', 'action'],
      claims_parameter_supported: true,
      claims_supported: expect.arrayContaining([
        'sub',
        'email',
        'name',
        'given_name',
        'family_name',
        'auth_time',
        'acr',
        'amr',
        'sid',
        'nonce',
        `${b}/v1`,
        `${b}/beta`,
      ]),
    });
  });

  it('answers a current cached copy with 304, and HEAD with the headers alone', async () => {
    for (const path of ['/.well-known/openid-configuration', '/jwks']) {
      const first = await request(h.publicApp).get(path);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/);
      expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(Number(first.headers['content-length'])).toBe(Buffer.byteLength(first.text));

      const notModified = await request(h.publicApp)
        .get(path)
        .set('If-None-Match', `"other", ${etag.slice(2)}`);
      expect(notModified.status).toBe(304);
      expect(notModified.headers.etag).toBe(etag);
      expect(notModified.headers['cache-control']).toBe(first.headers['cache-control']);
      expect(notModified.headers['content-type']).toBeUndefined();
      expect(notModified.text).toBe('');
      expect((await request(h.publicApp).get(path).set('If-None-Match', '*')).status).toBe(304);
      expect((await request(h.publicApp).get(path).set('If-None-Match', '"other"')).status).toBe(200);
      const skipCache = await request(h.publicApp)
        .get(path)
        .set('If-None-Match', etag)
        .set('Cache-Control', 'no-cache');
      expect(skipCache.status).toBe(200);
      expect(skipCache.text).toBe(first.text);

      const head = await request(h.publicApp).head(path);
      expect(head.status).toBe(200);
      expect(head.headers['content-length']).toBe(first.headers['content-length']);
      expect(head.text ?? '').toBe('');
    }
  });

  it('allows GET and OPTIONS only', async () => {
    expect((await request(h.publicApp).options('/.well-known/openid-configuration')).status).toBe(204);
    const post = await request(h.publicApp).post('/.well-known/openid-configuration');
    expect(post.status).toBe(405);
    expect(post.body).toEqual({
      code: 'method_not_allowed',
      detail: "HTTP method 'POST' is not allowed for this endpoint.",
      attribute: null,
    });
  });

  it('publishes RSA and EC keys with kid, alg and use at /jwks and /jwks.json, with a max-age', async () => {
    for (const path of ['/jwks', '/jwks.json']) {
      const res = await request(h.publicApp).get(path);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toMatch(/max-age=\d+/);
      expect(res.body.keys.length).toBeGreaterThanOrEqual(1);
      // issue 40, item 2: the PS256 and ES256 keys (EC, P-256) are published from start, beside RS256's
      for (const key of res.body.keys) {
        if (key.kty === 'EC') {
          expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
          expect(key).toMatchObject({ alg: 'ES256', crv: 'P-256', use: 'sig' });
        } else {
          expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
          expect(key).toMatchObject({ kty: 'RSA', alg: expect.stringMatching(/^(RS|PS)256$/), use: 'sig', e: 'AQAB' });
        }
        expect(key.kid).toMatch(/^jwk_[0-9a-f]{32}$/);
      }
    }
  });

  it('keeps private keys encrypted at rest', async () => {
    const rows = await h.storage.db.query<{ private_key_enc: string; public_jwk: Record<string, string> }>(
      'SELECT private_key_enc, public_jwk FROM signing_keys',
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.private_key_enc).toMatch(/^v1\./);
      expect(row.private_key_enc).not.toContain('PRIVATE KEY');
      expect(row.public_jwk.d).toBeUndefined();
    }
  });

  it('rotates on schedule: replicas agree on one new key, and the old one stays published until its tokens expire', async () => {
    const options = {
      keyEncryptionKey: h.config.keyEncryptionKey,
      rotationMs: 1000 * 60,
      maxTokenTtlMs: 3600 * 1000,
      refreshMs: 0,
    };
    const replicas = [0, 1, 2].map(() => new SigningKeys(keyStore(h.storage.db), options, testLogger));
    const before = await replicas[0].signingKey();
    // the active key turns 61 s old, and the next one has been published longer than /jwks is cached (by the
    // database clock, which is what replicas agree on); issue 40, item 2: only then does the next key sign
    await h.storage.db.query(
      "UPDATE signing_keys SET activated_at = activated_at - interval '61 seconds' WHERE retired_at IS NULL AND activated_at IS NOT NULL",
    );
    await h.storage.db.query(
      "UPDATE signing_keys SET created_at = created_at - interval '1 hour' WHERE retired_at IS NULL AND activated_at IS NULL",
    );
    const after = await Promise.all(replicas.map((r) => r.signingKey()));
    expect(new Set(after.map((k) => k.kid)).size).toBe(1);
    expect(after[0].kid).not.toBe(before.kid);
    const published = (await replicas[1].jwks()).map((k) => k.kid);
    expect(published).toEqual(expect.arrayContaining([before.kid, after[0].kid]));
    const [retired] = await h.storage.db.query<{ published_for: number }>(
      'SELECT extract(epoch FROM unpublish_at - retired_at)::int AS published_for FROM signing_keys WHERE kid = $1',
      [before.kid],
    );
    expect(retired.published_for).toBeGreaterThanOrEqual(3600);
    // once its tokens have expired, the old key leaves the JWKS
    await h.storage.db.query("UPDATE signing_keys SET unpublish_at = now() - interval '1 second' WHERE kid = $1", [
      before.kid,
    ]);
    expect((await replicas[2].jwks()).map((k) => k.kid)).not.toContain(before.kid);
  });
});

describe('identity admin API', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    h = await identityHarness();
  });
  afterAll(() => h.close());
  const admin = (method: 'get' | 'post', path: string) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  it('creates an app with app_/sk_ credentials, storing only a hash of the secret', async () => {
    const res = await admin('post', '/admin/apps').send({
      name: 'Shop',
      redirect_uris: ['https://shop.example/cb', 'http://127.0.0.1:8080/cb'],
    });
    expect(res.status).toBe(201);
    expect(res.body.app_id).toMatch(/^app_[0-9a-f]{32}$/);
    expect(res.body.client_secret).toMatch(/^sk_[0-9a-f]{48}$/);
    expect(res.body.redirect_uris).toEqual(['https://shop.example/cb', 'http://127.0.0.1:8080/cb']);
    const [row] = await h.storage.db.query<{ secret_hash: string }>('SELECT secret_hash FROM apps WHERE id = $1', [
      res.body.app_id,
    ]);
    expect(row.secret_hash).not.toContain(res.body.client_secret);
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    const list = await admin('get', '/admin/apps');
    // token_endpoint_auth_method names client_secret_basic; no secret or hash is listed
    expect(JSON.stringify(list.body)).not.toMatch(/sk_|"client_secret"|secret_hash|[0-9a-f]{64}/);
  });

  it.each([
    [{ redirect_uris: ['https://a.example/cb'] }, 'required', 'name'],
    [{ name: 'x' }, 'required', 'redirect_uris'],
    [{ name: 'x', redirect_uris: ['http://evil.example/cb'] }, 'invalid_parameter', 'redirect_uris.0'],
    [{ name: 'x', redirect_uris: ['https://a.example/cb#frag'] }, 'invalid_parameter', 'redirect_uris.0'],
    [{ name: 'x', redirect_uris: ['not a url'] }, 'invalid_parameter', 'redirect_uris.0'],
  ])('refuses a bad app %p with %s naming %s', async (body, code, attribute) => {
    const res = await admin('post', '/admin/apps').send(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code, attribute });
  });

  it('creates users with scrypt hashes, refuses duplicates and bad levels', async () => {
    const res = await admin('post', '/admin/users').send({
      username: 'bob',
      password: 'long enough pw',
      verification_level: 'device',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      user_id: expect.stringMatching(/^usr_[0-9a-f]{32}$/),
      username: 'bob',
      verification_level: 'device',
    });
    const [row] = await h.storage.db.query<{ password_hash: string }>(
      "SELECT password_hash FROM users WHERE username = 'bob'",
    );
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(row.password_hash).not.toContain('long enough pw');
    const dup = await admin('post', '/admin/users').send({
      username: 'bob',
      password: 'long enough pw',
      verification_level: 'device',
    });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ code: 'username_taken', attribute: 'username' });
    const bad = await admin('post', '/admin/users').send({
      username: 'carol',
      password: 'long enough pw',
      verification_level: 'iris',
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_parameter', attribute: 'verification_level' });
  });

  it('rotates a client secret: the old one stops working', async () => {
    const app = (await admin('post', '/admin/apps').send({ name: 'R', redirect_uris: ['https://r.example/cb'] })).body;
    const rotated = await admin('post', `/admin/apps/${app.app_id}/rotate-secret`);
    expect(rotated.body.client_secret).toMatch(/^sk_/);
    expect(rotated.body.client_secret).not.toBe(app.client_secret);
    const basic = (s: string) => `Basic ${Buffer.from(`${app.app_id}:${s}`).toString('base64')}`;
    const old = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(app.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code: 'x' });
    expect(old.status).toBe(401);
    const fresh = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(rotated.body.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code: 'x' });
    expect(fresh.status).toBe(400);
  });
});
