import http from 'node:http';
import request from 'supertest';
import { freePort, testLogger } from '@attest/testing';
import { keyStore } from '../src/kernel/key-store';
import { NEXT_KEY_LEAD_MS, SigningKeys } from '../src/kernel/signing-keys';
import {
  ADMIN_TOKEN,
  basic,
  browserFlow,
  callbackParams,
  createUser,
  identityHarness,
  type IdentityHarness,
} from './support';

type Jose = typeof import('jose');
type OAuth = typeof import('oauth4webapi');

const REDIRECT_URI = 'http://localhost:3000/callback';

/**
 * Issue 40, item 2: every signing key discovery advertises is in /jwks from start, so a relying party
 * that cached the JWKS (jose's createRemoteJWKSet, oauth4webapi) verifies the first PS256 or ES256
 * id_token without fetching it again; a rotation signs with a key published long before.
 */
describe('signing keys published ahead of their use (issue 40, item 2)', () => {
  let jose: Jose;
  let oauth: OAuth;
  let h: IdentityHarness;
  let server: http.Server;
  let issuer: string;
  let user: { username: string; password: string };
  const jwksFetches: string[] = [];
  const counted = async (url: string, init: RequestInit) => {
    jwksFetches.push(url);
    return fetch(url, init);
  };
  const admin = (method: 'post' | 'get', path: string) =>
    request(h.adminApp)[method](`/admin${path}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  beforeAll(async () => {
    jose = await import('jose');
    oauth = await import('oauth4webapi');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: issuer });
    server = http.createServer(h.publicApp);
    await new Promise<void>((resolve) => server.listen(port, resolve));
    user = await createUser(h);
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await h?.close();
  });

  const appSigningWith = async (alg: 'PS256' | 'ES256') => {
    const res = await admin('post', '/apps').send({
      name: `${alg} app`,
      redirect_uris: [REDIRECT_URI],
      id_token_signed_response_alg: alg,
    });
    expect(res.status).toBe(201);
    return res.body as { app_id: string; client_secret: string };
  };

  /** A sign-in and the code at /token: the id_token. */
  const idTokenOf = async (app: { app_id: string; client_secret: string }) => {
    const res = await browserFlow(
      request.agent(h.publicApp),
      { response_type: 'code', client_id: app.app_id, redirect_uri: REDIRECT_URI, scope: 'openid', state: 's' },
      user,
    );
    const { code } = callbackParams(res);
    const token = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(token.status).toBe(200);
    return token.body.id_token as string;
  };

  it('publishes a key of every advertised algorithm from start', async () => {
    const discovery = (await request(h.publicApp).get('/.well-known/openid-configuration').expect(200)).body;
    const jwks = (await request(h.publicApp).get('/jwks').expect(200)).body.keys as { alg: string; kid: string }[];
    for (const alg of ['RS256', 'PS256', 'ES256']) {
      expect(discovery.id_token_signing_alg_values_supported).toContain(alg);
      expect(jwks.filter((k) => k.alg === alg)).toHaveLength(1);
    }
    for (const key of jwks) expect(key).toMatchObject({ use: 'sig', kid: expect.stringMatching(/^jwk_[0-9a-f]{32}$/) });
    // the admin list (pnpm manage signing-key list): kid, alg, use and status of every key
    const listed = (await admin('get', '/keys').expect(200)).body.keys as Record<string, unknown>[];
    expect(listed).toHaveLength(3);
    for (const alg of ['RS256', 'PS256', 'ES256'])
      expect(listed.filter((k) => k.alg === alg)).toEqual([
        expect.objectContaining({ kid: expect.stringMatching(/^jwk_/), use: 'sig', status: 'active', active: true }),
      ]);
  });

  // the first ES256 id_token of this service
  it('oauth4webapi: a JWKS cached before verifies the first ES256 id_token of a hybrid response, with no refetch', async () => {
    const as = await oauth.processDiscoveryResponse(
      new URL(issuer),
      await oauth.discoveryRequest(new URL(issuer), { [oauth.allowInsecureRequests]: true }),
    );
    const app = await appSigningWith('ES256');
    // the relying party's cache of the JWKS, filled now (before the app's first ES256 id_token)
    const cache: import('oauth4webapi').JWKSCacheInput = {
      jwks: (await (await fetch(`${issuer}/jwks`)).json()) as import('oauth4webapi').JWKSCacheInput['jwks'],
      uat: Math.floor(Date.now() / 1000),
    };
    const fetchesBefore = jwksFetches.length;
    const nonce = oauth.generateRandomNonce();
    const res = await browserFlow(
      request.agent(h.publicApp),
      {
        response_type: 'code id_token',
        client_id: app.app_id,
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        state: 'hy',
        nonce,
      },
      user,
    );
    const params = new URLSearchParams(callbackParams(res));
    const client = { client_id: app.app_id, id_token_signed_response_alg: 'ES256' };
    const validated = await oauth.validateCodeIdTokenResponse(as, client, params, nonce, 'hy', undefined, {
      [oauth.jwksCache]: cache,
      [oauth.customFetch]: counted,
      [oauth.allowInsecureRequests]: true,
    });
    expect(validated.get('code')).toBe(params.get('code'));
    expect(jwksFetches.length).toBe(fetchesBefore);
  });

  it('jose createRemoteJWKSet: a JWKS fetched before verifies the first ES256 and PS256 id_tokens, with no refetch', async () => {
    const jwks = jose.createRemoteJWKSet(new URL(`${issuer}/jwks`), { [jose.customFetch]: counted });
    await jwks.reload();
    expect(jwksFetches).toHaveLength(1);
    // (this file's first PS256 id_token; its first ES256 one was oauth4webapi's above)
    for (const alg of ['PS256', 'ES256'] as const) {
      const app = await appSigningWith(alg);
      const idToken = await idTokenOf(app);
      const { protectedHeader, payload } = await jose.jwtVerify(idToken, jwks, { issuer, audience: app.app_id });
      expect(protectedHeader.alg).toBe(alg);
      expect(payload.aud).toBe(app.app_id);
    }
    expect(jwksFetches).toHaveLength(1);
  });

  it('rotates on schedule only to a next key published longer than the JWKS cache lifetime, on every replica alike', async () => {
    const options = {
      keyEncryptionKey: h.config.keyEncryptionKey,
      rotationMs: 60000,
      maxTokenTtlMs: 3600000,
      refreshMs: 0,
    };
    const replicas = [0, 1].map(() => new SigningKeys(keyStore(h.storage.db), options, testLogger));
    // the rotation period (60 s) is within the lead: the next key is published at the first look
    const before = await replicas[0].signingKey('ES256');
    const next = (await replicas[0].list()).find((k) => k.alg === 'ES256' && k.activatedAt === null)!;
    expect(next).toBeDefined();
    expect((await replicas[1].jwks()).map((k) => k.kid)).toContain(next.kid);
    // the active key is due, and the next one was published a moment ago: no relying party may hold it yet
    await h.storage.db.query(
      "UPDATE signing_keys SET activated_at = activated_at - interval '61 seconds' WHERE kid = $1",
      [before.kid],
    );
    await h.storage.db.query("UPDATE signing_keys SET created_at = now() - interval '10 seconds' WHERE kid = $1", [
      next.kid,
    ]);
    expect((await Promise.all(replicas.map((r) => r.signingKey('ES256')))).map((k) => k.kid)).toEqual([
      before.kid,
      before.kid,
    ]);
    // published for longer than the lead (more than /jwks's max-age): it signs, and a new next key is published
    const lead = (await request(h.publicApp).get('/jwks')).headers['cache-control'];
    expect(NEXT_KEY_LEAD_MS / 1000).toBeGreaterThan(Number(/max-age=(\d+)/.exec(lead)![1]));
    await h.storage.db.query(
      `UPDATE signing_keys SET created_at = now() - ${NEXT_KEY_LEAD_MS + 1000} * interval '1 millisecond' WHERE kid = $1`,
      [next.kid],
    );
    const after = await Promise.all(replicas.map((r) => r.signingKey('ES256')));
    expect(after.map((k) => k.kid)).toEqual([next.kid, next.kid]);
    const es256 = (await replicas[1].list()).filter((k) => k.alg === 'ES256' && k.retiredAt === null);
    // the one signing; (another, not signing, is the following next key: this period is within the lead)
    expect(es256.filter((k) => k.activatedAt !== null).map((k) => k.kid)).toEqual([next.kid]);
    expect(es256.filter((k) => k.activatedAt === null).every((k) => k.kid !== next.kid)).toBe(true);
    expect((await replicas[1].jwks()).map((k) => k.kid)).toEqual(expect.arrayContaining([before.kid, next.kid]));
  });

  it('publishes the next key ahead of the scheduled rotation, and an operator’s rotation signs with it', async () => {
    const listed = async () => (await admin('get', '/keys').expect(200)).body.keys as Record<string, string>[];
    const active = (await listed()).find((k) => k.alg === 'RS256' && k.status === 'active')!;
    // the RS256 key is 21 days old less 9 minutes: within the lead (10 minutes) of its scheduled rotation
    const rotationMs = h.config.KEY_ROTATION_DAYS * 86400000;
    await h.storage.db.query(
      `UPDATE signing_keys SET activated_at = now() - ${rotationMs - 9 * 60000} * interval '1 millisecond' WHERE kid = $1`,
      [active.kid],
    );
    const options = { keyEncryptionKey: h.config.keyEncryptionKey, rotationMs, maxTokenTtlMs: 3600000, refreshMs: 0 };
    const replica = new SigningKeys(keyStore(h.storage.db), options, testLogger);
    expect((await replica.signingKey()).kid).toBe(active.kid);
    const next = (await listed()).find((k) => k.alg === 'RS256' && k.status === 'next')!;
    expect(next).toMatchObject({ active: false, activated_at: null, retired_at: null });
    expect((await replica.jwks()).map((k) => k.kid)).toContain(next.kid);
    const rotated = (
      await request(h.adminApp)
        .post('/admin/keys/rotate')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({})
        .expect(200)
    ).body;
    expect(rotated).toMatchObject({ kid: next.kid, retired: active.kid });
    const after = await listed();
    expect(after.find((k) => k.kid === next.kid)).toMatchObject({ status: 'active', active: true });
    expect(after.find((k) => k.kid === active.kid)).toMatchObject({ status: 'retired', active: false });
  });
});
