import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { createBus, RedisCache, type Cache } from '@attest/common';
import { testLogger } from '@attest/testing';
import {
  ADMIN_TOKEN,
  BASE_URL,
  basic,
  browserFlow,
  callbackParams,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

const redisUrl = process.env.TEST_REDIS_URL;
const withoutUndefined = (claims: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== undefined));

/** The same cache for a second instance, which it does not close (the first one does). */
const borrowed = (cache: Cache): Cache =>
  new Proxy(cache, {
    get: (target, name: keyof Cache) =>
      name === 'close'
        ? async () => undefined
        : typeof target[name] === 'function'
          ? target[name].bind(target)
          : target[name],
  });

/**
 * Issue 40, item 7: a signed request object (JAR, by value or pushed) lives at most 60 minutes after its
 * nbf (or iat), and its jti is accepted once within that life, on every replica: two instances over one
 * database and one shared cache (Redis with TEST_REDIS_URL, else one in-process cache).
 */
describe('request objects: a bounded lifetime and one use, across replicas (issue 40, item 7)', () => {
  let one: IdentityHarness;
  let two: IdentityHarness;
  let app: { app_id: string; client_secret: string };
  let user: { username: string; password: string };
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'jar-ps256', use: 'sig', alg: 'PS256' };
  const verifier = randomBytes(32).toString('base64url');

  beforeAll(async () => {
    if (redisUrl) {
      const prefix = `test:identity:${randomBytes(5).toString('hex')}:`;
      const shared = () => ({
        cache: new RedisCache(redisUrl, prefix, testLogger),
        bus: createBus(redisUrl, prefix, testLogger),
      });
      one = await identityHarness({}, shared());
      two = await identityHarness({}, { ...shared(), db: one.storage.db });
    } else {
      one = await identityHarness();
      two = await identityHarness({}, { db: one.storage.db, cache: borrowed(one.storage.cache), bus: one.storage.bus });
    }
    const created = await request(one.adminApp)
      .post('/admin/apps')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ name: 'JAR app', redirect_uris: [REDIRECT_URI], jwks: { keys: [jwk] } });
    expect(created.status).toBe(201);
    app = created.body;
    user = await createUser(one);
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
  });

  const now = () => Math.floor(Date.now() / 1000);
  const requestObject = (claims: Record<string, unknown> = {}) =>
    jwt.sign(
      withoutUndefined({
        iss: app.app_id,
        aud: BASE_URL,
        jti: randomBytes(12).toString('hex'),
        nbf: now(),
        exp: now() + 300,
        response_type: 'code',
        client_id: app.app_id,
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        state: 'jar',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        ...claims,
      }),
      privateKey,
      { algorithm: 'PS256', keyid: 'jar-ps256' },
    );
  const par = (h: IdentityHarness, requestJwt: string) =>
    request(h.publicApp)
      .post('/par')
      .type('form')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .send({ client_id: app.app_id, request: requestJwt });

  it('refuses a request object whose exp is ten years ahead, pushed or by value', async () => {
    const tenYears = requestObject({ exp: now() + 10 * 365 * 86400 });
    const pushed = await par(one, tenYears);
    expect(pushed.status).toBe(400);
    expect(pushed.body).toMatchObject({
      error: 'invalid_request_object',
      error_description: expect.stringContaining('exp must be at most 60 minutes after nbf'),
    });
    const byValue = await request(two.publicApp)
      .get('/authorize')
      .query({ client_id: app.app_id, request: requestObject({ exp: now() + 10 * 365 * 86400 }) });
    expect(byValue.status).toBe(400);
    expect(byValue.text).toContain('exp must be at most 60 minutes after nbf');
    // measured from iat when there is no nbf
    const fromIat = await par(one, requestObject({ nbf: undefined, iat: now() - 3000, exp: now() + 900 }));
    expect(fromIat.body).toMatchObject({ error: 'invalid_request_object' });
    // 59 minutes after nbf is within the bound
    expect((await par(one, requestObject({ exp: now() + 59 * 60 }))).status).toBe(201);
  });

  it('refuses a request object without jti', async () => {
    const res = await par(one, requestObject({ jti: undefined }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: 'invalid_request_object',
      error_description: expect.stringContaining('jti is required'),
    });
  });

  it('refuses a replayed request object on the other replica, pushed or by value', async () => {
    const object = requestObject();
    const first = await par(one, object);
    expect(first.status).toBe(201);
    const replayed = await par(two, object);
    expect(replayed.status).toBe(400);
    expect(replayed.body).toMatchObject({
      error: 'invalid_request_object',
      error_description: expect.stringContaining('this jti was used before'),
    });
    const byValue = await request(two.publicApp).get('/authorize').query({ client_id: app.app_id, request: object });
    expect(byValue.status).toBe(400);
    expect(byValue.text).toContain('this jti was used before');
    // the first use goes on: its request_uri signs in
    const signedIn = await browserFlow(
      request.agent(two.publicApp),
      { client_id: app.app_id, request_uri: first.body.request_uri },
      user,
    );
    expect(callbackParams(signedIn)).toMatchObject({ code: expect.any(String), state: 'jar' });
  });

  it('signs in with a request object by value once, on either replica', async () => {
    const object = requestObject({ state: 'by-value' });
    const signedIn = await browserFlow(request.agent(one.publicApp), { client_id: app.app_id, request: object }, user);
    expect(callbackParams(signedIn)).toMatchObject({ code: expect.any(String), state: 'by-value' });
    const again = await request(two.publicApp).get('/authorize').query({ client_id: app.app_id, request: object });
    expect(again.status).toBe(400);
    expect(again.text).toContain('this jti was used before');
  });
});
