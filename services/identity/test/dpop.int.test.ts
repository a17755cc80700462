import { createHash, generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { createBus, MemoryCache, RedisCache } from '@attest/common';
import { testLogger } from '@attest/testing';
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

type Jose = typeof import('jose');
type Key = Awaited<ReturnType<Jose['generateKeyPair']>>['privateKey'];
type KeyPair = { privateKey: Key; publicKey: Key; jwk: Record<string, unknown>; jkt: string; alg: string };
type Client = { app_id: string; client_secret: string };

const ISSUER = 'http://localhost:4000';
const TOKEN_URL = `${ISSUER}/token`;
const USERINFO_URL = `${ISSUER}/userinfo`;
const ALGS = 'algs="ES256 PS256 RS256 EdDSA Ed25519"';
const redisUrl = process.env.TEST_REDIS_URL;

/** DPoP (RFC 9449) at /token, /userinfo and /introspect; proofs made with jose (a real JOSE library). */
describe('DPoP (RFC 9449)', () => {
  let jose: Jose;
  let h: IdentityHarness;
  let app: Client;
  let user: { username: string; password: string };
  let key: KeyPair;
  let otherKey: KeyPair;
  let rsa: KeyPair;

  async function keyPair(alg = 'ES256'): Promise<KeyPair> {
    const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
    const jwk = await jose.exportJWK(publicKey);
    return { privateKey, publicKey, jwk, jkt: await jose.calculateJwkThumbprint(jwk, 'sha256'), alg };
  }

  async function proof(
    k: KeyPair,
    claims: { htm?: string; htu?: string; ath?: string; nonce?: string; iat?: number; jti?: string } = {},
    header: Record<string, unknown> = {},
  ): Promise<string> {
    const { iat, ...rest } = claims;
    return new jose.SignJWT({ htm: 'POST', htu: TOKEN_URL, jti: randomUUID(), ...rest })
      .setProtectedHeader({ alg: k.alg, typ: 'dpop+jwt', jwk: k.jwk, ...header } as never)
      .setIssuedAt(iat)
      .sign(k.privateKey);
  }

  const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

  async function code(client: Client, extra: Record<string, string> = {}): Promise<string> {
    const res = await browserFlow(
      request.agent(h.publicApp),
      {
        response_type: 'code',
        scope: 'openid email profile',
        client_id: client.app_id,
        redirect_uri: REDIRECT_URI,
        nonce: 'n-1',
        ...extra,
      },
      user,
    );
    return callbackParams(res).code;
  }

  const token = (client: Client, codeValue: string, dpop?: string, target: IdentityHarness = h) => {
    const req = request(target.publicApp)
      .post('/token')
      .set('Authorization', basic(client.app_id, client.client_secret))
      .type('form');
    if (dpop !== undefined) req.set('DPoP', dpop);
    return req.send({ grant_type: 'authorization_code', code: codeValue, redirect_uri: REDIRECT_URI });
  };

  async function boundToken(k: KeyPair = key, client: Client = app): Promise<string> {
    const res = await token(client, await code(client), await proof(k));
    expect(res.status).toBe(200);
    return res.body.access_token as string;
  }

  const userinfo = (accessToken: string, dpop?: string, scheme = 'DPoP', target: IdentityHarness = h) => {
    const req = request(target.publicApp).get('/userinfo').set('Authorization', `${scheme} ${accessToken}`);
    if (dpop !== undefined) req.set('DPoP', dpop);
    return req;
  };
  const userinfoProof = (k: KeyPair, accessToken: string, extra: Record<string, string> = {}) =>
    proof(k, { htm: 'GET', htu: USERINFO_URL, ath: ath(accessToken), ...extra });

  const admin = (method: 'post' | 'patch' | 'get', path: string) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  beforeAll(async () => {
    jose = await import('jose');
    h = await identityHarness();
    app = await createApp(h);
    user = await createUser(h);
    key = await keyPair();
    otherKey = await keyPair();
    rsa = await keyPair('RS256');
  });
  afterAll(() => h.close());

  it('discovery names the proof algorithms', async () => {
    const res = await request(h.publicApp).get('/.well-known/openid-configuration').expect(200);
    expect(res.body.dpop_signing_alg_values_supported).toEqual(['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519']);
  });

  describe('/token', () => {
    it('binds the access token to the proof key: token_type DPoP, cnf.jkt, a DPoP-Nonce, and /introspect says so', async () => {
      const res = await token(app, await code(app), await proof(key));
      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('DPoP');
      expect(res.headers['dpop-nonce']).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{22}$/);
      const claims = jwt.decode(res.body.access_token) as Record<string, unknown>;
      expect(claims.cnf).toEqual({ jkt: key.jkt });
      const introspection = await request(h.publicApp)
        .post('/introspect')
        .set('Authorization', basic(app.app_id, app.client_secret))
        .type('form')
        .send({ token: res.body.access_token })
        .expect(200);
      expect(introspection.body).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: key.jkt } });
    });

    it('without a proof, an app that does not require DPoP still gets a Bearer token without cnf', async () => {
      const res = await token(app, await code(app));
      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('Bearer');
      expect(res.headers['dpop-nonce']).toBeUndefined();
      expect((jwt.decode(res.body.access_token) as Record<string, unknown>).cnf).toBeUndefined();
    });

    it.each(['PS256', 'RS256', 'EdDSA', 'Ed25519'])('accepts a %s proof', async (alg) => {
      const k = await keyPair(alg);
      const res = await token(app, await code(app), await proof(k));
      expect(res.status).toBe(200);
      expect((jwt.decode(res.body.access_token) as { cnf: unknown }).cnf).toEqual({ jkt: k.jkt });
    });

    it('compares htu without query and fragment, scheme and host case-insensitively', async () => {
      const res = await token(app, await code(app), await proof(key, { htu: 'HTTP://LOCALHOST:4000/token?x=1#f' }));
      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('DPoP');
    });

    const refusals: [string, (k: KeyPair) => Promise<string>, RegExp][] = [
      ['a wrong htu', (k) => proof(k, { htu: `${ISSUER}/userinfo` }), /htu must be http:\/\/localhost:4000\/token/],
      ['a wrong htm', (k) => proof(k, { htm: 'GET' }), /htm must be POST/],
      [
        'an iat too old',
        (k) => proof(k, { iat: Math.floor(Date.now() / 1000) - 120 }),
        /iat must be within 60 seconds/,
      ],
      ['an iat in the future', (k) => proof(k, { iat: Math.floor(Date.now() / 1000) + 120 }), /iat must be within/],
      ['another typ', (k) => proof(k, {}, { typ: 'JWT' }), /typ must be dpop\+jwt/],
      [
        'a private key in jwk',
        async (k) => {
          const withPrivate = await jose.exportJWK(k.privateKey);
          return proof(k, {}, { jwk: withPrivate });
        },
        /must be a public key/,
      ],
      [
        'another key in jwk than the one that signed',
        async (k) => proof({ ...k, jwk: otherKey.jwk }),
        /signature is invalid/,
      ],
      ['no jti', async (k) => proof(k, { jti: '' }), /jti is missing/],
      ['a jwk of an unknown kty', async (k) => proof(k, {}, { jwk: { ...k.jwk, kty: 'constructor' } }), /kty/],
      ['an RSA key under alg ES256', async (k) => proof(k, {}, { jwk: rsa.jwk }), /does not fit alg ES256/],
      [
        'a 1024-bit RSA key',
        async () => {
          // jose refuses to make one: signed by hand
          const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
          const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
          const input = `${part({ alg: 'RS256', typ: 'dpop+jwt', jwk: publicKey.export({ format: 'jwk' }) })}.${part({
            htm: 'POST',
            htu: TOKEN_URL,
            jti: randomUUID(),
            iat: Math.floor(Date.now() / 1000),
          })}`;
          return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
        },
        /2048 to 8192 bits/,
      ],
      ['two proofs', async (k) => `${await proof(k)}, ${await proof(k)}`, /exactly one proof/],
      ['a non-JWT', async () => 'not-a-proof', /exactly one proof/],
    ];
    it.each(refusals)('refuses %s: 400 invalid_dpop_proof, and the code is not spent', async (_name, make, detail) => {
      const c = await code(app);
      const res = await token(app, c, await make(key));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_dpop_proof', code: 'invalid_dpop_proof', attribute: 'DPoP' });
      expect(res.body.error_description).toMatch(detail);
      expect(res.headers['cache-control']).toBe('no-store');
      expect((await token(app, c, await proof(key))).status).toBe(200);
    });

    it('refuses a replayed proof (its jti), even for another code', async () => {
      const p = await proof(key);
      expect((await token(app, await code(app), p)).status).toBe(200);
      const res = await token(app, await code(app), p);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_dpop_proof' });
      expect(res.body.error_description).toMatch(/already used/);
    });

    it('a server nonce is accepted; an unknown one gets use_dpop_nonce with a fresh DPoP-Nonce', async () => {
      const first = await token(app, await code(app), await proof(key));
      const nonce = first.headers['dpop-nonce'] as string;
      expect((await token(app, await code(app), await proof(key, { nonce }))).status).toBe(200);
      const res = await token(app, await code(app), await proof(key, { nonce: 'zz.AAAAAAAAAAAAAAAAAAAAAA' }));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'use_dpop_nonce' });
      expect(res.headers['dpop-nonce']).toMatch(/^[0-9a-z]+\./);
    });
  });

  describe('/userinfo', () => {
    let bound: string;
    beforeAll(async () => {
      bound = await boundToken();
    });

    it('answers a DPoP-bound token with a proof of its key (ath, htm, htu)', async () => {
      const res = await userinfo(bound, await userinfoProof(key, bound));
      expect(res.status).toBe(200);
      expect(res.body.sub).toMatch(/^0x[0-9a-f]{64}$/);
      expect(res.headers['dpop-nonce']).toBeDefined();
      const post = await request(h.publicApp)
        .post('/userinfo')
        .set('Authorization', `DPoP ${bound}`)
        .set('DPoP', await proof(key, { htm: 'POST', htu: USERINFO_URL, ath: ath(bound) }));
      expect(post.status).toBe(200);
    });

    it('refuses the DPoP-bound token presented as a Bearer token, with a DPoP challenge', async () => {
      const res = await userinfo(bound, undefined, 'Bearer');
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'invalid_token' });
      expect(res.headers['www-authenticate']).toMatch(/^DPoP error="invalid_token", error_description="[^"]+"/);
      expect(res.headers['www-authenticate']).toContain(ALGS);
      // even with a valid proof beside it
      expect((await userinfo(bound, await userinfoProof(key, bound), 'Bearer')).status).toBe(401);
    });

    const cases: [string, () => Promise<string | undefined>, string][] = [
      ['no proof', async () => undefined, 'invalid_dpop_proof'],
      [
        'a wrong ath',
        () => proof(key, { htm: 'GET', htu: USERINFO_URL, ath: ath('another token') }),
        'invalid_dpop_proof',
      ],
      ['no ath', () => proof(key, { htm: 'GET', htu: USERINFO_URL }), 'invalid_dpop_proof'],
      ['a wrong htu', () => proof(key, { htm: 'GET', htu: TOKEN_URL, ath: ath(bound) }), 'invalid_dpop_proof'],
      ['a wrong htm', () => proof(key, { htm: 'POST', htu: USERINFO_URL, ath: ath(bound) }), 'invalid_dpop_proof'],
      ['a proof by another key', () => userinfoProof(otherKey, bound), 'invalid_dpop_proof'],
    ];
    it.each(cases)('refuses %s: 401 with WWW-Authenticate DPoP error=…, algs=…', async (_name, make, error) => {
      const res = await userinfo(bound, await make());
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: error });
      expect(res.headers['www-authenticate']).toMatch(new RegExp(`^DPoP error="${error}", error_description="[^"]+"`));
      expect(res.headers['www-authenticate']).toContain(ALGS);
    });

    it('embedded: the proofs it remembers are kept apart from the shared cache (a flood of proofs fills only theirs)', async () => {
      const shared = h.storage.cache;
      if (!(shared instanceof MemoryCache)) return; // with Redis the replay records are shared by the replicas
      const before = shared.size;
      for (let i = 0; i < 5; i++) expect((await userinfo(bound, await userinfoProof(key, bound))).status).toBe(200);
      expect(shared.size).toBe(before);
    });

    it('refuses a replayed proof', async () => {
      const p = await userinfoProof(key, bound);
      expect((await userinfo(bound, p)).status).toBe(200);
      const res = await userinfo(bound, p);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(
        /^DPoP error="invalid_dpop_proof", error_description="[^"]*already used/,
      );
    });

    it('refuses a Bearer token (not bound) under the DPoP scheme', async () => {
      const plain = (await token(app, await code(app))).body.access_token as string;
      expect((await userinfo(plain, undefined, 'Bearer')).status).toBe(200);
      const res = await userinfo(plain, await userinfoProof(key, plain));
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^DPoP error="invalid_token"/);
    });

    it('a forged token under the DPoP scheme gets a DPoP challenge', async () => {
      const res = await userinfo(`${bound}x`, await userinfoProof(key, `${bound}x`));
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^DPoP error="invalid_token"/);
    });
  });

  describe('dpop_jkt (RFC 9449 §10)', () => {
    it('a code asked for with dpop_jkt is redeemed only with a proof by that key', async () => {
      const wrong = await token(app, await code(app, { dpop_jkt: key.jkt }), await proof(otherKey));
      expect(wrong.status).toBe(400);
      expect(wrong.body).toMatchObject({ error: 'invalid_dpop_proof' });
      expect(wrong.body.error_description).toMatch(/dpop_jkt/);
      const none = await token(app, await code(app, { dpop_jkt: key.jkt }));
      expect(none.status).toBe(400);
      expect(none.body).toMatchObject({ error: 'invalid_dpop_proof' });
      const right = await token(app, await code(app, { dpop_jkt: key.jkt }), await proof(key));
      expect(right.status).toBe(200);
      expect((jwt.decode(right.body.access_token) as { cnf: unknown }).cnf).toEqual({ jkt: key.jkt });
    });

    it('a malformed dpop_jkt is refused at /authorize with invalid_request', async () => {
      const res = await request(h.publicApp).get('/authorize').query({
        response_type: 'code',
        scope: 'openid',
        client_id: app.app_id,
        redirect_uri: REDIRECT_URI,
        dpop_jkt: 'short',
      });
      expect(res.status).toBe(302);
      const params = new URL(res.headers.location as string).searchParams;
      expect(params.get('error')).toBe('invalid_request');
      expect(params.get('error_description')).toMatch(/dpop_jkt/);
    });
  });

  describe('PAR (RFC 9449 §10, RFC 9126)', () => {
    const PAR_URL = `${ISSUER}/par`;
    const push = (form: Record<string, string>, dpop?: string, client: Client = app) => {
      const req = request(h.publicApp).post('/par').set('Authorization', basic(client.app_id, client.client_secret));
      if (dpop !== undefined) req.set('DPoP', dpop);
      return req.type('form').send({
        response_type: 'code',
        scope: 'openid',
        redirect_uri: REDIRECT_URI,
        nonce: 'n-1',
        state: 'st-par',
        ...form,
      });
    };
    /** Signs in with a pushed request; the callback's parameters. */
    const signInWith = async (requestUri: string, person = user, client: Client = app) =>
      browserFlow(request.agent(h.publicApp), { client_id: client.app_id, request_uri: requestUri }, person);

    it('a proof at /par binds the code to its key: its jkt becomes the request’s dpop_jkt', async () => {
      const pushed = await push({}, await proof(key, { htu: PAR_URL }));
      expect(pushed.status).toBe(201);
      expect(pushed.headers['dpop-nonce']).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{22}$/);
      const code = callbackParams(await signInWith(pushed.body.request_uri)).code;
      const wrong = await token(app, code, await proof(otherKey));
      expect(wrong.status).toBe(400);
      expect(wrong.body).toMatchObject({ error: 'invalid_dpop_proof' });
      expect(wrong.body.error_description).toMatch(/dpop_jkt/);

      const again = await push({}, await proof(key, { htu: PAR_URL }));
      const right = await token(app, callbackParams(await signInWith(again.body.request_uri)).code, await proof(key));
      expect(right.status).toBe(200);
      expect(right.body.token_type).toBe('DPoP');
      expect((jwt.decode(right.body.access_token) as { cnf: unknown }).cnf).toEqual({ jkt: key.jkt });
    });

    it('a dpop_jkt pushed without a proof is kept; with a proof it must name the proof’s key', async () => {
      const kept = await push({ dpop_jkt: key.jkt });
      expect(kept.status).toBe(201);
      expect(kept.headers['dpop-nonce']).toBeUndefined();
      const code = callbackParams(await signInWith(kept.body.request_uri)).code;
      expect((await token(app, code, await proof(otherKey))).body).toMatchObject({ error: 'invalid_dpop_proof' });

      const same = await push({ dpop_jkt: key.jkt }, await proof(key, { htu: PAR_URL }));
      expect(same.status).toBe(201);
      const mismatch = await push({ dpop_jkt: otherKey.jkt }, await proof(key, { htu: PAR_URL }));
      expect(mismatch.status).toBe(400);
      expect(mismatch.headers['cache-control']).toBe('no-store');
      expect(mismatch.body).toMatchObject({ error: 'invalid_request' });
      expect(mismatch.body.error_description).toMatch(/dpop_jkt/);
    });

    it('refuses a proof for another URL or method, a replayed one, and a stale nonce at /par', async () => {
      const wrongHtu = await push({}, await proof(key, { htu: TOKEN_URL }));
      expect(wrongHtu.status).toBe(400);
      expect(wrongHtu.body).toMatchObject({ error: 'invalid_dpop_proof' });
      expect(wrongHtu.body.error_description).toMatch(/htu/);
      const wrongHtm = await push({}, await proof(key, { htu: PAR_URL, htm: 'GET' }));
      expect(wrongHtm.body).toMatchObject({ error: 'invalid_dpop_proof' });
      const once = await proof(key, { htu: PAR_URL });
      expect((await push({}, once)).status).toBe(201);
      const replayed = await push({}, once);
      expect(replayed.status).toBe(400);
      expect(replayed.body).toMatchObject({ error: 'invalid_dpop_proof' });
      expect(replayed.body.error_description).toMatch(/already used/);
      const stale = await push({}, await proof(key, { htu: PAR_URL, nonce: '0.AAAAAAAAAAAAAAAAAAAAAA' }));
      expect(stale.status).toBe(400);
      expect(stale.body).toMatchObject({ error: 'use_dpop_nonce' });
      expect(stale.headers['dpop-nonce']).toEqual(expect.any(String));
    });

    it('keeps acr_values and the claims parameter in the pushed request', async () => {
      const deviceUser = await createUser(h, { verification_level: 'device' });
      const essentialOrb = JSON.stringify({ id_token: { acr: { essential: true, values: ['urn:attest:loa:orb'] } } });
      const refused = await signInWith((await push({ claims: essentialOrb })).body.request_uri, deviceUser);
      expect(refused.status).toBe(403);
      const back = new URL(/id="back-to-app" href="([^"]+)"/.exec(refused.text)![1].replace(/&amp;/g, '&'));
      expect(back.searchParams.get('error')).toBe('unmet_authentication_requirements');
      expect(back.searchParams.get('state')).toBe('st-par');
      expect(back.searchParams.get('iss')).toBe(ISSUER);

      const voluntary = await push({
        acr_values: 'urn:attest:loa:orb',
        claims: JSON.stringify({ userinfo: { acr: null } }),
      });
      expect(voluntary.status).toBe(201);
      const code = callbackParams(await signInWith(voluntary.body.request_uri, deviceUser)).code;
      const tokens = await token(app, code, await proof(key));
      expect(tokens.status).toBe(200);
      expect((jwt.decode(tokens.body.id_token) as { acr: string }).acr).toBe('urn:attest:loa:device');
      const info = await userinfo(tokens.body.access_token, await userinfoProof(key, tokens.body.access_token));
      expect(info.status).toBe(200);
      expect(info.body.acr).toBe('urn:attest:loa:device');
    });
  });

  describe('an app that requires DPoP (dpop_bound_access_tokens)', () => {
    let strict: Client;
    beforeAll(async () => {
      const res = await admin('post', '/admin/apps')
        .send({ name: 'DPoP app', redirect_uris: [REDIRECT_URI], dpop_bound_access_tokens: true })
        .expect(201);
      strict = res.body;
      expect(res.body.dpop_bound_access_tokens).toBe(true);
    });

    it('refuses a token request without a proof, and binds the one with a proof', async () => {
      const c = await code(strict);
      const res = await token(strict, c);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_request', attribute: 'DPoP' });
      expect(res.body.error_description).toMatch(/requires a DPoP proof/);
      const ok = await token(strict, c, await proof(key));
      expect(ok.status).toBe(200);
      expect(ok.body.token_type).toBe('DPoP');
    });

    it('refuses response types that return an access token from /authorize', async () => {
      const res = await request(h.publicApp).get('/authorize').query({
        response_type: 'code token',
        scope: 'openid',
        client_id: strict.app_id,
        redirect_uri: REDIRECT_URI,
        nonce: 'n',
      });
      expect(res.status).toBe(302);
      const params = new URLSearchParams(new URL(res.headers.location as string).hash.slice(1));
      expect(params.get('error')).toBe('unauthorized_client');
    });

    it('is a setting of the admin API, audited, defaulting to false', async () => {
      expect((await admin('get', `/admin/apps/${app.app_id}`).expect(200)).body.dpop_bound_access_tokens).toBe(false);
      const off = await admin('patch', `/admin/apps/${strict.app_id}`).send({ dpop_bound_access_tokens: false });
      expect(off.status).toBe(200);
      expect(off.body.dpop_bound_access_tokens).toBe(false);
      expect((await token(strict, await code(strict))).status).toBe(200);
      const on = await admin('patch', `/admin/apps/${strict.app_id}`).send({ dpop_bound_access_tokens: true });
      expect(on.body.dpop_bound_access_tokens).toBe(true);
      expect((await token(strict, await code(strict))).status).toBe(400);
      const bad = await admin('patch', `/admin/apps/${strict.app_id}`).send({ dpop_bound_access_tokens: 'yes' });
      expect(bad.status).toBe(400);
      expect(bad.body.attribute).toBe('dpop_bound_access_tokens');
      const audit = await admin('get', '/admin/audit?type=app.updated&limit=1000').expect(200);
      const changes = (audit.body.events as { subject: string; detail: Record<string, unknown> }[]).filter(
        (e) => e.subject === strict.app_id,
      );
      expect(changes.map((e) => e.detail.dpop_bound_access_tokens)).toEqual(expect.arrayContaining([false, true]));
    });
  });

  it('with the verification level as acr: an app with both settings gets tokens carrying acr and cnf.jkt', async () => {
    const created = await admin('post', '/admin/apps')
      .send({
        name: 'DPoP and orb app',
        redirect_uris: [REDIRECT_URI],
        dpop_bound_access_tokens: true,
        min_verification_level: 'orb',
      })
      .expect(201);
    expect(created.body).toMatchObject({ dpop_bound_access_tokens: true, min_verification_level: 'orb' });
    const both = created.body as Client;
    const claimsParam = JSON.stringify({ userinfo: { acr: null, auth_time: null } });
    const res = await token(both, await code(both, { claims: claimsParam }), await proof(key));
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    const claims = jwt.decode(res.body.access_token) as Record<string, unknown>;
    expect(claims).toMatchObject({ cnf: { jkt: key.jkt }, acr: 'urn:attest:loa:orb', amr: ['pwd'] });
    expect(typeof claims.auth_time).toBe('number');
    const introspection = await request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(both.app_id, both.client_secret))
      .type('form')
      .send({ token: res.body.access_token })
      .expect(200);
    expect(introspection.body).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt: key.jkt },
      acr: 'urn:attest:loa:orb',
      auth_time: claims.auth_time,
    });
    const info = await userinfo(res.body.access_token, await userinfoProof(key, res.body.access_token));
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ acr: 'urn:attest:loa:orb', auth_time: claims.auth_time });
  });

  it('a public client (PKCE, no secret) gets a DPoP-bound token and uses it at /userinfo', async () => {
    const created = await admin('post', '/admin/apps')
      .send({ name: 'SPA', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' })
      .expect(201);
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const c = await code(created.body as Client, { code_challenge: challenge, code_challenge_method: 'S256' });
    const res = await request(h.publicApp)
      .post('/token')
      .set('DPoP', await proof(key))
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: c,
        redirect_uri: REDIRECT_URI,
        client_id: created.body.app_id,
        code_verifier: verifier,
      });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    const info = await userinfo(res.body.access_token, await userinfoProof(key, res.body.access_token));
    expect(info.status).toBe(200);
  });

  describe('DPOP_NONCE_REQUIRED=true', () => {
    let strictNonces: IdentityHarness;
    let client: Client;
    let person: { username: string; password: string };
    beforeAll(async () => {
      strictNonces = await identityHarness({ DPOP_NONCE_REQUIRED: 'true' });
      client = await createApp(strictNonces);
      person = await createUser(strictNonces);
    });
    afterAll(() => strictNonces.close());

    it('a proof without the server nonce gets use_dpop_nonce and a DPoP-Nonce; with it, tokens and userinfo', async () => {
      const res = await browserFlow(
        request.agent(strictNonces.publicApp),
        { response_type: 'code', scope: 'openid', client_id: client.app_id, redirect_uri: REDIRECT_URI },
        person,
      );
      const c = callbackParams(res).code;
      const first = await token(client, c, await proof(key), strictNonces);
      expect(first.status).toBe(400);
      expect(first.body).toMatchObject({ error: 'use_dpop_nonce' });
      const nonce = first.headers['dpop-nonce'] as string;
      expect(nonce).toBeDefined();
      const second = await token(client, c, await proof(key, { nonce }), strictNonces);
      expect(second.status).toBe(200);
      const access = second.body.access_token as string;
      const refused = await userinfo(access, await userinfoProof(key, access), 'DPoP', strictNonces);
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toMatch(/^DPoP error="use_dpop_nonce"/);
      expect(refused.headers['dpop-nonce']).toBeDefined();
      const info = await userinfo(
        access,
        await userinfoProof(key, access, { nonce: refused.headers['dpop-nonce'] as string }),
        'DPoP',
        strictNonces,
      );
      expect(info.status).toBe(200);
    });
  });

  it('a nonce lasts between five and ten minutes: an older one gets use_dpop_nonce (the clock moved on)', async () => {
    let offset = 0;
    const clocked = await identityHarness({}, {}, { now: () => Date.now() + offset });
    try {
      const client = await createApp(clocked);
      const person = await createUser(clocked);
      const codeAt = async () =>
        callbackParams(
          await browserFlow(
            request.agent(clocked.publicApp),
            { response_type: 'code', scope: 'openid', client_id: client.app_id, redirect_uri: REDIRECT_URI },
            person,
          ),
        ).code;
      const first = await token(client, await codeAt(), await proof(key), clocked);
      const nonce = first.headers['dpop-nonce'] as string;
      offset = 5 * 60 * 1000;
      const iat = Math.floor((Date.now() + offset) / 1000);
      expect((await token(client, await codeAt(), await proof(key, { nonce, iat }), clocked)).status).toBe(200);
      offset = 11 * 60 * 1000;
      const late = await token(client, await codeAt(), await proof(key, { nonce, iat: iat + 360 }), clocked);
      expect(late.status).toBe(400);
      expect(late.body).toMatchObject({ error: 'use_dpop_nonce' });
      expect(late.headers['dpop-nonce']).not.toBe(nonce);
    } finally {
      await clocked.close();
    }
  });

  (redisUrl ? describe : describe.skip)('two replicas sharing Postgres and Redis', () => {
    let two: IdentityHarness;
    let one: IdentityHarness;
    let client: Client;
    let person: { username: string; password: string };
    beforeAll(async () => {
      const prefix = `test:identity:${randomBytes(5).toString('hex')}:`;
      const shared = () => ({
        cache: new RedisCache(redisUrl!, prefix, testLogger),
        bus: createBus(redisUrl, prefix, testLogger),
      });
      one = await identityHarness({}, shared());
      two = await identityHarness({}, { ...shared(), db: one.storage.db });
      client = await createApp(one);
      person = await createUser(one);
    });
    afterAll(async () => {
      await two.close();
      await one.close();
    });

    it('a proof used at one replica is refused at the other, at /token and at /userinfo', async () => {
      const codeAt = async () =>
        callbackParams(
          await browserFlow(
            request.agent(one.publicApp),
            { response_type: 'code', scope: 'openid', client_id: client.app_id, redirect_uri: REDIRECT_URI },
            person,
          ),
        ).code;
      const p = await proof(key);
      const first = await token(client, await codeAt(), p, one);
      expect(first.status).toBe(200);
      const replayed = await token(client, await codeAt(), p, two);
      expect(replayed.status).toBe(400);
      expect(replayed.body).toMatchObject({ error: 'invalid_dpop_proof' });
      const access = first.body.access_token as string;
      const up = await userinfoProof(key, access);
      expect((await userinfo(access, up, 'DPoP', one)).status).toBe(200);
      const again = await userinfo(access, up, 'DPoP', two);
      expect(again.status).toBe(401);
      expect(again.headers['www-authenticate']).toMatch(/already used/);
    });
  });
});
