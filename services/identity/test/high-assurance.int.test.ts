import { createHash, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { createBus, RedisCache } from '@attest/common';
import { testLogger } from '@attest/testing';
import {
  ADMIN_TOKEN,
  BASE_URL,
  basic,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

interface AppKey {
  kid: string;
  alg: 'RS256' | 'PS256' | 'ES256';
  privateKey: KeyObject;
  jwk: Record<string, unknown>;
}

function appKey(alg: AppKey['alg'], kid = `k-${randomBytes(4).toString('hex')}`): AppKey {
  const { privateKey, publicKey } =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid, alg, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig' } };
}

describe('high-assurance apps: PAR, signed requests, private_key_jwt, iss (issue 24)', () => {
  let h: IdentityHarness;
  let clock = Date.now();
  let user: { username: string; password: string };
  const rsa = appKey('PS256');
  const ec = appKey('ES256');
  let keyApp: { app_id: string };
  let secretApp: { app_id: string; client_secret: string };
  let parOnly: { app_id: string; client_secret: string };
  const admin = (method: 'post' | 'patch' | 'get', path: string) =>
    request(h.adminApp)[method](`/admin${path}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  beforeAll(async () => {
    h = await identityHarness({}, {}, { now: () => clock });
    user = await createUser(h);
    const created = await admin('post', '/apps').send({
      name: 'Bank',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [rsa.jwk, ec.jwk] },
      require_pushed_authorization_requests: true,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      token_endpoint_auth_method: 'private_key_jwt',
      require_pushed_authorization_requests: true,
      jwks_uri: null,
    });
    expect(created.body.client_secret).toBeUndefined();
    keyApp = created.body;
    secretApp = await createApp(h);
    parOnly = await createApp(h, [REDIRECT_URI], 'PAR only');
    await admin('patch', `/apps/${parOnly.app_id}`).send({ require_pushed_authorization_requests: true }).expect(200);
  });
  afterAll(() => h.close());

  const now = () => Math.floor(clock / 1000);
  const assertion = (claims: Record<string, unknown> = {}, key: AppKey = rsa, appId = keyApp.app_id) =>
    jwt.sign(
      {
        iss: appId,
        sub: appId,
        aud: BASE_URL,
        jti: randomBytes(16).toString('hex'),
        iat: now(),
        exp: now() + 60,
        ...claims,
      },
      key.privateKey,
      { algorithm: key.alg, keyid: key.kid },
    );
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const authParams = (appId: string, extra: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: appId,
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    state: 'st',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
  const par = (form: Record<string, string>, authorization?: string) => {
    const req = request(h.publicApp).post('/par').type('form');
    if (authorization) req.set('Authorization', authorization);
    return req.send(form);
  };

  it('pushes a request with private_key_jwt, signs in with its request_uri once, and exchanges the code with a new assertion', async () => {
    const pushed = await par({
      ...authParams(keyApp.app_id),
      client_assertion_type: JWT_BEARER,
      client_assertion: assertion(),
    });
    expect(pushed.status).toBe(201);
    expect(pushed.headers['cache-control']).toBe('no-store');
    expect(pushed.body).toEqual({
      request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:[0-9a-f]{64}$/),
      expires_in: 60,
    });
    const agent = request.agent(h.publicApp);
    const res = await browserFlow(agent, { client_id: keyApp.app_id, request_uri: pushed.body.request_uri }, user);
    const params = callbackParams(res);
    expect(params).toEqual({ code: expect.any(String), state: 'st', iss: BASE_URL });

    // the same request_uri again: refused on a page (single use), never redirected
    const again = await agent
      .get('/authorize')
      .query({ client_id: keyApp.app_id, request_uri: pushed.body.request_uri });
    expect(again.status).toBe(400);
    expect(again.text).toContain('request_uri');
    expect(again.headers.location).toBeUndefined();

    const token = await request(h.publicApp)
      .post('/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: params.code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
        client_assertion_type: JWT_BEARER,
        client_assertion: assertion({}, ec),
      });
    expect(token.status).toBe(200);
    expect(token.body.token_type).toBe('Bearer');

    // the same app introspects and revokes its token with assertions too
    const introspected = await request(h.publicApp)
      .post('/introspect')
      .type('form')
      .send({ token: token.body.access_token, client_assertion_type: JWT_BEARER, client_assertion: assertion() });
    expect(introspected.status).toBe(200);
    expect(introspected.body).toMatchObject({ active: true, client_id: keyApp.app_id });
    await request(h.publicApp)
      .post('/revoke')
      .type('form')
      .send({ token: token.body.access_token, client_assertion_type: JWT_BEARER, client_assertion: assertion() })
      .expect(200);
    const after = await request(h.publicApp)
      .post('/introspect')
      .type('form')
      .send({ token: token.body.access_token, client_assertion_type: JWT_BEARER, client_assertion: assertion() });
    expect(after.body).toEqual({ active: false });
  });

  it('refuses an unpushed request of an app that requires PAR, with iss in the error redirect', async () => {
    for (const app of [keyApp, parOnly]) {
      const res = await request(h.publicApp).get('/authorize').query(authParams(app.app_id));
      expect(res.status).toBe(302);
      expect(callbackParams(res)).toEqual({
        error: 'invalid_request',
        error_description: expect.stringContaining('/par'),
        state: 'st',
        iss: BASE_URL,
      });
    }
    // a form_post error carries iss too
    const posted = await request(h.publicApp)
      .get('/authorize')
      .query(authParams(parOnly.app_id, { response_mode: 'form_post' }));
    expect(posted.status).toBe(200);
    expect(callbackParams(posted)).toMatchObject({ error: 'invalid_request', iss: BASE_URL });
  });

  it('refuses a request_uri once it expired, and another app’s request_uri', async () => {
    const pushed = await par(authParams(parOnly.app_id), basic(parOnly.app_id, parOnly.client_secret));
    expect(pushed.status).toBe(201);
    const other = await request(h.publicApp)
      .get('/authorize')
      .query({ client_id: secretApp.app_id, request_uri: pushed.body.request_uri });
    expect(other.status).toBe(400);
    expect(other.text).toContain('request_uri');
    // another app's try neither reads nor spends it (issue 40, item 6): the app that pushed it still signs in
    const own = await request(h.publicApp)
      .get('/authorize')
      .query({ client_id: parOnly.app_id, request_uri: pushed.body.request_uri });
    expect(own.status).toBe(302);
    expect(own.headers.location).toMatch(/^\/signin\?interaction=/);

    const late = await par(authParams(parOnly.app_id), basic(parOnly.app_id, parOnly.client_secret));
    clock += 61000;
    const res = await request(h.publicApp)
      .get('/authorize')
      .set('Accept', 'application/json')
      .query({ client_id: parOnly.app_id, request_uri: late.body.request_uri });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_request_uri', attribute: 'request_uri' });
  });

  it('refuses a replayed assertion jti, a wrong aud, an expired or foreign-signed assertion, and a client secret for a private_key_jwt app', async () => {
    const form = (client_assertion: string) => ({
      ...authParams(keyApp.app_id),
      client_assertion_type: JWT_BEARER,
      client_assertion,
    });
    const once = assertion();
    expect((await par(form(once))).status).toBe(201);
    const replay = await par(form(once));
    expect(replay.status).toBe(401);
    expect(replay.body).toMatchObject({ error: 'invalid_client', error_description: expect.stringContaining('jti') });

    const wrongAud = await par(form(assertion({ aud: `${BASE_URL}/par` })));
    expect(wrongAud.status).toBe(401);
    expect(wrongAud.body).toMatchObject({ error: 'invalid_client', error_description: expect.stringContaining('aud') });
    expect(wrongAud.body.error_description).toContain(`aud must be the issuer (${BASE_URL}) or ${BASE_URL}/token.`);

    // OpenID Connect Core §9: aud SHOULD be the token endpoint's URL, as Authlib and Spring send it (issue
    // 40, item 4); alone, or among others
    expect((await par(form(assertion({ aud: `${BASE_URL}/token` })))).status).toBe(201);
    expect((await par(form(assertion({ aud: ['https://elsewhere.example', `${BASE_URL}/token`] })))).status).toBe(201);

    const expired = await par(form(assertion({ iat: now() - 180, exp: now() - 120 })));
    expect(expired.status).toBe(401);
    expect(expired.body.error_description).toContain('expired');
    // an hour ahead, as Authlib's PrivateKeyJWT makes them by default: taken; longer: refused
    expect((await par(form(assertion({ exp: now() + 3600 })))).status).toBe(201);
    const tooLong = await par(form(assertion({ exp: now() + 7200 })));
    expect(tooLong.status).toBe(401);
    expect(tooLong.body.error_description).toContain('exp must be at most 3600 seconds ahead');

    const stranger = appKey('RS256', rsa.kid);
    const forged = await par(form(assertion({}, stranger)));
    expect(forged.status).toBe(401);

    const secretAttempt = await par(
      authParams(keyApp.app_id),
      basic(keyApp.app_id, 'sk_0123456789abcdef0123456789abcdef0123456789abcdef'),
    );
    expect(secretAttempt.status).toBe(401);
    expect(secretAttempt.body.error).toBe('invalid_client');

    // another app's secret client cannot use an assertion either
    const secretAppAssertion = await par({
      ...authParams(secretApp.app_id),
      client_assertion_type: JWT_BEARER,
      client_assertion: assertion({}, rsa, secretApp.app_id),
    });
    expect(secretAppAssertion.status).toBe(401);
  });

  it('counts failed assertions against the credential failure limits', async () => {
    const main = h;
    h = await identityHarness({ AUTH_FAILURES_PER_ID: '2' }, {}, { now: () => clock });
    try {
      await countsFailures();
    } finally {
      await h.close();
      h = main;
    }
  });

  async function countsFailures() {
    const limited = await admin('post', '/apps').send({
      name: 'Limited',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [rsa.jwk] },
    });
    const bad = () =>
      par({
        ...authParams(limited.body.app_id),
        client_id: limited.body.app_id,
        client_assertion_type: JWT_BEARER,
        client_assertion: assertion({ aud: 'https://elsewhere.example' }, rsa, limited.body.app_id),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await bad()).status);
    expect(statuses).toEqual([401, 401, 429, 429]);
    const good = await par({
      ...authParams(limited.body.app_id),
      client_assertion_type: JWT_BEARER,
      client_assertion: assertion({}, rsa, limited.body.app_id),
    });
    expect(good.status).toBe(429);
  }

  it('opens a signed request object at /authorize and inside PAR, and refuses one signed by another key', async () => {
    const requestObject = (claims: Record<string, unknown>, key: AppKey = rsa) =>
      jwt.sign(
        {
          iss: keyApp.app_id,
          aud: BASE_URL,
          // a jti, used once (issue 40, item 7)
          jti: randomBytes(12).toString('hex'),
          exp: now() + 300,
          nbf: now(),
          ...authParams(keyApp.app_id),
          ...claims,
        },
        key.privateKey,
        { algorithm: key.alg, keyid: key.kid },
      );
    const pushed = await par({
      client_id: keyApp.app_id,
      request: requestObject({ state: 'from-jar' }),
      client_assertion_type: JWT_BEARER,
      client_assertion: assertion(),
    });
    expect(pushed.status).toBe(201);
    const res = await browserFlow(
      request.agent(h.publicApp),
      { client_id: keyApp.app_id, request_uri: pushed.body.request_uri, state: 'ignored' },
      user,
    );
    expect(callbackParams(res)).toMatchObject({ code: expect.any(String), state: 'from-jar', iss: BASE_URL });

    const forged = await par({
      client_id: keyApp.app_id,
      request: requestObject({}, appKey('PS256', rsa.kid)),
      client_assertion_type: JWT_BEARER,
      client_assertion: assertion(),
    });
    expect(forged.status).toBe(400);
    expect(forged.body).toMatchObject({ error: 'invalid_request_object' });

    const expired = await par({
      client_id: keyApp.app_id,
      request: requestObject({ exp: now() - 120 }),
      client_assertion_type: JWT_BEARER,
      client_assertion: assertion(),
    });
    expect(expired.body).toMatchObject({
      error: 'invalid_request_object',
      error_description: expect.stringContaining('exp'),
    });

    // by value at /authorize: an app that does not require PAR
    const jarApp = await admin('post', '/apps').send({
      name: 'JAR',
      redirect_uris: [REDIRECT_URI],
      jwks: { keys: [ec.jwk] },
    });
    const signed = jwt.sign(
      {
        iss: jarApp.body.app_id,
        aud: BASE_URL,
        jti: randomBytes(12).toString('hex'),
        exp: now() + 300,
        ...authParams(jarApp.body.app_id, { state: 'jar' }),
      },
      ec.privateKey,
      { algorithm: 'ES256', keyid: ec.kid },
    );
    const byValue = await browserFlow(
      request.agent(h.publicApp),
      { client_id: jarApp.body.app_id, request: signed, scope: 'openid' },
      user,
    );
    expect(callbackParams(byValue)).toMatchObject({ code: expect.any(String), state: 'jar', iss: BASE_URL });
  });

  it('fetches the keys at jwks_uri, again when an assertion names an unknown kid', async () => {
    let served: Record<string, unknown>[] = [rsa.jwk];
    let fetches = 0;
    const server = http.createServer((_req, res) => {
      fetches++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: served }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
      const app = await admin('post', '/apps').send({
        name: 'Remote keys',
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: uri,
      });
      expect(app.status).toBe(201);
      const push = (key: AppKey) =>
        par({
          ...authParams(app.body.app_id),
          client_assertion_type: JWT_BEARER,
          client_assertion: assertion({}, key, app.body.app_id),
        });
      expect((await push(rsa)).status).toBe(201);
      expect((await push(rsa)).status).toBe(201);
      expect(fetches).toBe(1);
      // the app rotates to its EC key: the unknown kid makes the set be fetched again
      served = [ec.jwk];
      clock += 11000;
      expect((await push(ec)).status).toBe(201);
      expect(fetches).toBe(2);
    } finally {
      server.close();
    }
  });

  it('keeps the settings in the admin API: switching to private_key_jwt ends the secret, switching back makes one', async () => {
    const app = await createApp(h);
    const noKeys = await admin('patch', `/apps/${app.app_id}`).send({ token_endpoint_auth_method: 'private_key_jwt' });
    expect(noKeys.status).toBe(400);
    expect(noKeys.body).toMatchObject({ attribute: 'jwks' });
    const privateJwk = { ...rsa.privateKey.export({ format: 'jwk' }), kid: 'p' };
    const leaked = await admin('patch', `/apps/${app.app_id}`).send({ jwks: { keys: [privateJwk] } });
    expect(leaked.status).toBe(400);
    expect(leaked.body.detail).toContain('public key');

    const switched = await admin('patch', `/apps/${app.app_id}`).send({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [rsa.jwk] },
      id_token_signed_response_alg: 'RS256',
    });
    expect(switched.status).toBe(200);
    expect(switched.body.client_secret).toBeUndefined();
    const oldSecret = await par(authParams(app.app_id), basic(app.app_id, app.client_secret));
    expect(oldSecret.status).toBe(401);
    const rotate = await admin('post', `/apps/${app.app_id}/rotate-secret`);
    expect(rotate.status).toBe(409);
    expect(rotate.body).toMatchObject({ code: 'private_key_jwt' });

    const back = await admin('patch', `/apps/${app.app_id}`).send({ token_endpoint_auth_method: 'client_secret_post' });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({
      token_endpoint_auth_method: 'client_secret_post',
      client_secret: expect.stringMatching(/^sk_/),
    });
    const pushed = await par({ ...authParams(app.app_id), client_secret: back.body.client_secret });
    expect(pushed.status).toBe(201);
  });

  it('binds a pushed request to the DPoP proof sent to /par with private_key_jwt (RFC 9449 §10)', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const jkt = createHash('sha256')
      .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
      .digest('base64url');
    const dpop = (htu: string) =>
      jwt.sign({ htm: 'POST', htu, jti: randomBytes(12).toString('hex'), iat: now() }, privateKey, {
        algorithm: 'ES256',
        header: { alg: 'ES256', typ: 'dpop+jwt', jwk } as jwt.JwtHeader,
      });
    const pushed = await request(h.publicApp)
      .post('/par')
      .set('DPoP', dpop(`${BASE_URL}/par`))
      .type('form')
      .send({ ...authParams(keyApp.app_id), client_assertion_type: JWT_BEARER, client_assertion: assertion() });
    expect(pushed.status).toBe(201);
    expect(pushed.headers['dpop-nonce']).toEqual(expect.any(String));
    const code = callbackParams(
      await browserFlow(
        request.agent(h.publicApp),
        { client_id: keyApp.app_id, request_uri: pushed.body.request_uri },
        user,
      ),
    ).code;
    const token = await request(h.publicApp)
      .post('/token')
      .set('DPoP', dpop(`${BASE_URL}/token`))
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
        client_assertion_type: JWT_BEARER,
        client_assertion: assertion(),
      });
    expect(token.status).toBe(200);
    expect(token.body.token_type).toBe('DPoP');
    expect((jwt.decode(token.body.access_token) as { cnf: unknown }).cnf).toEqual({ jkt });

    // a dpop_jkt inside a signed request object naming another key than the proof's: refused
    const other = createHash('sha256').update('another key').digest('base64url');
    const requestObject = jwt.sign(
      {
        iss: keyApp.app_id,
        aud: BASE_URL,
        jti: randomBytes(12).toString('hex'),
        exp: now() + 300,
        ...authParams(keyApp.app_id),
        dpop_jkt: other,
      },
      rsa.privateKey,
      { algorithm: rsa.alg, keyid: rsa.kid },
    );
    const mismatch = await request(h.publicApp)
      .post('/par')
      .set('DPoP', dpop(`${BASE_URL}/par`))
      .type('form')
      .send({
        client_id: keyApp.app_id,
        request: requestObject,
        client_assertion_type: JWT_BEARER,
        client_assertion: assertion(),
      });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toMatchObject({ error: 'invalid_request', attribute: 'dpop_jkt' });
  });

  it('leaves apps without the settings as they were: no PAR needed, secrets at /par too', async () => {
    const res = await browserFlow(request.agent(h.publicApp), authParams(secretApp.app_id), user);
    expect(callbackParams(res)).toEqual({ code: expect.any(String), state: 'st', iss: BASE_URL });
    const pushed = await par(authParams(secretApp.app_id), basic(secretApp.app_id, secretApp.client_secret));
    expect(pushed.status).toBe(201);
    const unknownUri = await par(
      { ...authParams(secretApp.app_id), request_uri: pushed.body.request_uri },
      basic(secretApp.app_id, secretApp.client_secret),
    );
    expect(unknownUri.status).toBe(400);
    expect(unknownUri.body).toMatchObject({ error: 'invalid_request', attribute: 'request_uri' });
    const badRedirect = await par(
      { ...authParams(secretApp.app_id), redirect_uri: 'https://evil.example/cb' },
      basic(secretApp.app_id, secretApp.client_secret),
    );
    expect(badRedirect.status).toBe(400);
    expect(badRedirect.body).toMatchObject({ error: 'invalid_request', attribute: 'redirect_uri' });
  });
  it('signs the id_tokens of an app that asks for ES256 or PS256 with a key of that algorithm, published in the JWKS', async () => {
    for (const alg of ['ES256', 'PS256'] as const) {
      const app = await admin('post', '/apps').send({
        name: `${alg} app`,
        redirect_uris: [REDIRECT_URI],
        id_token_signed_response_alg: alg,
      });
      expect(app.body.id_token_signed_response_alg).toBe(alg);
      const res = await browserFlow(request.agent(h.publicApp), authParams(app.body.app_id), user);
      const token = await request(h.publicApp)
        .post('/token')
        .set('Authorization', basic(app.body.app_id, app.body.client_secret))
        .type('form')
        .send({
          grant_type: 'authorization_code',
          code: callbackParams(res).code,
          redirect_uri: REDIRECT_URI,
          code_verifier: verifier,
        });
      expect(token.status).toBe(200);
      const header = jwt.decode(token.body.id_token, { complete: true })!.header;
      expect(header.alg).toBe(alg);
      // the access token stays RS256, as resource servers expect
      expect(jwt.decode(token.body.access_token, { complete: true })!.header.alg).toBe('RS256');
      const jwks = (await request(h.publicApp).get('/jwks')).body.keys as Record<string, unknown>[];
      const jwk = jwks.find((k) => k.kid === header.kid)!;
      expect(jwk).toMatchObject({ alg, use: 'sig', kty: alg === 'ES256' ? 'EC' : 'RSA' });
      expect(jwk.d).toBeUndefined();
      const claims = jwt.verify(token.body.id_token, createPublicKey({ key: jwk as never, format: 'jwk' }), {
        algorithms: [alg],
        audience: app.body.app_id,
        issuer: BASE_URL,
      });
      expect(claims).toMatchObject({ sub: expect.any(String) });
    }
  });
  it('rotates every algorithm’s key set together; an emergency rotation leaves one new key per algorithm', async () => {
    const before = (await request(h.publicApp).get('/jwks')).body.keys as { kid: string; alg: string }[];
    expect(new Set(before.map((k) => k.alg))).toEqual(new Set(['RS256', 'PS256', 'ES256']));
    const rotated = await admin('post', '/keys/rotate').send({ revoke_previous: true });
    expect(rotated.status).toBe(200);
    const after = (await request(h.publicApp).get('/jwks')).body.keys as { kid: string; alg: string }[];
    expect(after.map((k) => k.alg).sort()).toEqual(['ES256', 'PS256', 'RS256']);
    expect(after.some((k) => before.some((b) => b.kid === k.kid))).toBe(false);
    expect(rotated.body.revoked).toEqual(expect.arrayContaining(before.map((k) => k.kid)));
  });
});

const redisUrl = process.env.TEST_REDIS_URL;

/** Two replicas over one Postgres schema and one Redis: a pushed request and an assertion's jti are shared. */
(redisUrl ? describe : describe.skip)('high-assurance apps on two replicas sharing Postgres and Redis', () => {
  let one: IdentityHarness;
  let two: IdentityHarness;
  const key = appKey('ES256');

  beforeAll(async () => {
    const prefix = `test:identity:${randomBytes(5).toString('hex')}:`;
    const shared = () => ({
      cache: new RedisCache(redisUrl!, prefix, testLogger),
      bus: createBus(redisUrl, prefix, testLogger),
    });
    one = await identityHarness({}, shared());
    two = await identityHarness({}, { ...shared(), db: one.storage.db });
  });
  afterAll(async () => {
    await two.close();
    await one.close();
  });

  it('uses a request_uri pushed to one replica once on the other, and refuses an assertion replayed to the other', async () => {
    const app = await request(one.adminApp)
      .post('/admin/apps')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({
        name: 'Replicated bank',
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [key.jwk] },
        require_pushed_authorization_requests: true,
      });
    expect(app.status).toBe(201);
    const appId = app.body.app_id as string;
    const now = Math.floor(Date.now() / 1000);
    const assertion = jwt.sign(
      { iss: appId, sub: appId, aud: BASE_URL, jti: randomBytes(16).toString('hex'), exp: now + 60 },
      key.privateKey,
      { algorithm: 'ES256', keyid: key.kid },
    );
    const form = {
      response_type: 'code',
      client_id: appId,
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      state: 'r',
      client_assertion_type: JWT_BEARER,
      client_assertion: assertion,
    };
    const pushed = await request(one.publicApp).post('/par').type('form').send(form);
    expect(pushed.status).toBe(201);
    const replayed = await request(two.publicApp).post('/par').type('form').send(form);
    expect(replayed.status).toBe(401);
    expect(replayed.body.error_description).toContain('jti');

    const query = { client_id: appId, request_uri: pushed.body.request_uri as string };
    const used = await request(two.publicApp).get('/authorize').query(query);
    expect(used.status).toBe(302);
    expect(used.headers.location).toMatch(/^\/signin\?interaction=/);
    const again = await request(one.publicApp).get('/authorize').set('Accept', 'application/json').query(query);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ code: 'invalid_request_uri' });
  });
});
