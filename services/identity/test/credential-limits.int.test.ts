import request from 'supertest';
import type { Express } from 'express';
import type { RedisCache } from '@attest/common';
import { testLogger } from '@attest/testing';
import { buildApp, buildServices } from '../src/app';
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

type Client = { app_id: string; client_secret: string };
type Response = request.Response;

const WRONG = 'sk_000000000000000000000000000000000000000000000000';
const POLICY = '"per-id-and-address";q=10;w=900, "per-id";q=100;w=900, "per-address";q=200;w=900';

/** Runs `count` requests, `parallel` at a time, and returns the responses in order. */
async function burst(count: number, parallel: number, send: (i: number) => Promise<Response>): Promise<Response[]> {
  const out: Response[] = [];
  for (let start = 0; start < count; start += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - start) }, (_, j) => send(start + j));
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

/** A 429 in the shared error shape, with Retry-After and the RateLimit fields of the policy that refused it. */
function expectRefused(res: Response, policy: string, extra: Record<string, string> = {}): void {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    code: 'too_many_requests',
    detail: expect.stringMatching(/^Too many failed attempts; try again in \d+ seconds\.$/),
    attribute: null,
    ...extra,
  });
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(900);
  expect(res.headers['ratelimit-policy']).toContain(`"${policy}";q=`);
  expect(res.headers.ratelimit).toBe(`"${policy}";r=0;t=${retryAfter}`);
}

const OAUTH_429 = {
  error: 'temporarily_unavailable',
  error_description: expect.stringMatching(/^Too many failed attempts/),
};

describe('failed client authentication is limited (identity)', () => {
  let h: IdentityHarness;
  let user: { username: string; password: string };
  beforeAll(async () => {
    h = await identityHarness({ TRUST_PROXY: 'loopback' });
    user = await createUser(h);
  });
  afterAll(() => h.close());

  async function codeFor(client: Client): Promise<string> {
    const agent = request.agent(h.publicApp);
    const res = await browserFlow(
      agent,
      { response_type: 'code', scope: 'openid', client_id: client.app_id, redirect_uri: REDIRECT_URI },
      user,
    );
    return callbackParams(res).code;
  }

  const token = (from: string, auth: string, code = 'f'.repeat(32)) =>
    request(h.publicApp)
      .post('/token')
      .set('X-Forwarded-For', from)
      .set('Authorization', auth)
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });

  const introspect = (from: string, auth: string) =>
    request(h.publicApp)
      .post('/introspect')
      .set('X-Forwarded-For', from)
      .set('Authorization', auth)
      .type('form')
      .send({ token: 'a.b.c' });

  it('/token with wrong client secrets: 10 answers of 401, then 429 even for the right secret', async () => {
    const client = await createApp(h);
    const code = await codeFor(client);
    const wrong = await burst(50, 50, () => token('203.0.113.1', basic(client.app_id, WRONG)));
    const failed = wrong.filter((r) => r.status === 401);
    expect(failed.length).toBe(10);
    expect(wrong.filter((r) => r.status === 429).length).toBe(40);
    expect(failed[0].body.code).toBe('unauthenticated');
    expect(failed[0].headers['ratelimit-policy']).toBe(POLICY);
    for (const r of failed)
      expect(r.headers.ratelimit).toMatch(
        /^"per-id-and-address";r=\d;t=\d+, "per-id";r=\d+;t=\d+, "per-address";r=\d+;t=\d+$/,
      );
    expectRefused(
      wrong.find((r) => r.status === 429)!,
      'per-id-and-address',
      OAUTH_429,
    );

    const right = await token('203.0.113.1', basic(client.app_id, client.client_secret), code);
    expectRefused(right, 'per-id-and-address', OAUTH_429);
    expect(right.headers['cache-control']).toBe('no-store');

    // refused before the code was looked at: it still works from elsewhere
    const elsewhere = await token('203.0.113.2', basic(client.app_id, client.client_secret), code);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.token_type).toBe('Bearer');
  });

  it('a blocked client id does not block another client id from the same address', async () => {
    const blocked = await createApp(h);
    const other = await createApp(h);
    const first = await token('203.0.113.3', basic(blocked.app_id, WRONG));
    expect(first.status).toBe(401);
    expect(first.headers.ratelimit).toMatch(
      /^"per-id-and-address";r=9;t=\d+, "per-id";r=99;t=\d+, "per-address";r=199;t=\d+$/,
    );
    for (let i = 1; i < 10; i++) expect((await token('203.0.113.3', basic(blocked.app_id, WRONG))).status).toBe(401);
    expectRefused(
      await token('203.0.113.3', basic(blocked.app_id, blocked.client_secret)),
      'per-id-and-address',
      OAUTH_429,
    );
    const res = await token('203.0.113.3', basic(other.app_id, other.client_secret), await codeFor(other));
    expect(res.status).toBe(200);
  });

  it('/token with random codes: 200 answers of invalid_grant, then 429 even for a real code', async () => {
    const client = await createApp(h);
    const auth = basic(client.app_id, client.client_secret);
    const guesses = await burst(230, 50, (i) => token('203.0.113.4', auth, i.toString(16).padStart(32, '0')));
    expect(guesses.filter((r) => r.status === 400 && r.body.code === 'invalid_grant').length).toBe(200);
    expect(guesses.filter((r) => r.status === 429).length).toBe(30);
    expectRefused(
      guesses.find((r) => r.status === 429)!,
      'per-client-codes',
      OAUTH_429,
    );
    expect(guesses.find((r) => r.status === 400)!.headers['ratelimit-policy']).toBe('"per-client-codes";q=200;w=900');

    const code = await codeFor(client);
    expectRefused(await token('203.0.113.5', auth, code), 'per-client-codes', OAUTH_429);
    const other = await createApp(h);
    expect((await token('203.0.113.4', basic(other.app_id, other.client_secret), await codeFor(other))).status).toBe(
      200,
    );
  });

  it('/introspect with wrong secrets: 10 answers of 401, then 429 even for the right secret', async () => {
    const client = await createApp(h);
    const wrong = await burst(30, 30, () => introspect('203.0.113.6', basic(client.app_id, WRONG)));
    expect(wrong.filter((r) => r.status === 401).length).toBe(10);
    expect(wrong.filter((r) => r.status === 429).length).toBe(20);
    expectRefused(
      wrong.find((r) => r.status === 429)!,
      'per-id-and-address',
    );
    expectRefused(await introspect('203.0.113.6', basic(client.app_id, client.client_secret)), 'per-id-and-address');
    const elsewhere = await introspect('203.0.113.7', basic(client.app_id, client.client_secret));
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body.code).toBe('invalid_token');
  });

  it('documents the 429 with Retry-After and the RateLimit fields at /token and /introspect', async () => {
    const doc = (await request(h.publicApp).get('/openapi.json')).body;
    for (const path of ['/token', '/introspect']) {
      const refused = doc.paths[path].post.responses['429'];
      expect(refused.description).toMatch(/^too_many_requests: /);
      expect(Object.keys(refused.headers)).toEqual(['Retry-After', 'RateLimit-Policy', 'RateLimit']);
      expect(refused.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
  });
});

describe('per-id and per-address limits (identity, small limits)', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    h = await identityHarness({ TRUST_PROXY: 'loopback', AUTH_FAILURES_PER_ID: '12', AUTH_FAILURES_PER_ADDRESS: '15' });
  });
  afterAll(() => h.close());

  const introspect = (from: string, auth: string) =>
    request(h.publicApp)
      .post('/introspect')
      .set('X-Forwarded-For', from)
      .set('Authorization', auth)
      .type('form')
      .send({ token: 'a.b.c' });

  const post = (path: '/token' | '/revoke', from: string, auth: string, body: Record<string, string>) =>
    request(h.publicApp).post(path).set('X-Forwarded-For', from).set('Authorization', auth).type('form').send(body);

  it('limits one client id across addresses only for the addresses that failed: the others keep working', async () => {
    const target = await createApp(h);
    const other = await createApp(h);
    for (let i = 0; i < 12; i++)
      expect((await introspect(`198.51.100.${i}`, basic(target.app_id, WRONG))).status).toBe(401);
    // anyone who knows the client id can send wrong secrets: the right one still works from elsewhere
    const right = basic(target.app_id, target.client_secret);
    const fresh = await introspect('198.51.100.200', right);
    expect(fresh.status).toBe(401);
    expect(fresh.body.code).toBe('invalid_token');
    const exchange = await post('/token', '198.51.100.201', right, {
      grant_type: 'authorization_code',
      code: 'x',
      redirect_uri: REDIRECT_URI,
    });
    expect(exchange.status).toBe(400);
    expect(exchange.body.code).toBe('invalid_grant');
    expect((await post('/revoke', '198.51.100.202', right, { token: 'a.b.c' })).status).toBe(200);
    // an address that failed itself is refused, even with the right secret
    expectRefused(await introspect('198.51.100.0', right), 'per-id');
    expectRefused(await post('/revoke', '198.51.100.0', right, { token: 'a.b.c' }), 'per-id');
    // a new address that fails once the id is over its limit is refused from then on
    expect((await introspect('198.51.100.203', basic(target.app_id, WRONG))).status).toBe(429);
    expectRefused(await introspect('198.51.100.203', right), 'per-id');
    expect((await introspect('198.51.100.0', basic(other.app_id, other.client_secret))).body.code).toBe(
      'invalid_token',
    );
  });

  it('limits one address across client ids', async () => {
    const clients = await Promise.all([createApp(h), createApp(h), createApp(h), createApp(h)]);
    for (const client of clients.slice(0, 3))
      for (let i = 0; i < 5; i++) expect((await introspect('192.0.2.9', basic(client.app_id, WRONG))).status).toBe(401);
    const fresh = clients[3];
    expectRefused(await introspect('192.0.2.9', basic(fresh.app_id, fresh.client_secret)), 'per-address');
    expect((await introspect('192.0.2.10', basic(fresh.app_id, fresh.client_secret))).body.code).toBe('invalid_token');
  });
});

const describeRedis = process.env.TEST_REDIS_URL ? describe : describe.skip;

describeRedis('two replicas sharing one Redis share the count (identity)', () => {
  let h: IdentityHarness;
  let second: Express;
  beforeAll(async () => {
    h = await identityHarness({ TRUST_PROXY: 'loopback' });
    const deps = {
      config: h.config,
      storage: { ...h.storage, describe: { database: 'test', cache: 'test' } },
      logger: testLogger,
      readiness: { shuttingDown: false, checks: [] },
      adminToken: ADMIN_TOKEN,
    };
    second = (await buildApp(deps, buildServices(deps))).publicApp;
  });
  afterAll(() => h.close());

  const introspect = (app: Express, auth: string) =>
    request(app)
      .post('/introspect')
      .set('X-Forwarded-For', '203.0.113.99')
      .set('Authorization', auth)
      .type('form')
      .send({ token: 'a.b.c' });

  it('counts failures on either replica against one limit, and stores no secret in Redis', async () => {
    const client = await createApp(h);
    for (let i = 0; i < 5; i++) expect((await introspect(h.publicApp, basic(client.app_id, WRONG))).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await introspect(second, basic(client.app_id, WRONG))).status).toBe(401);
    expectRefused(await introspect(h.publicApp, basic(client.app_id, WRONG)), 'per-id-and-address');
    expectRefused(await introspect(h.publicApp, basic(client.app_id, client.client_secret)), 'per-id-and-address');

    const redis = (h.storage.cache as RedisCache).redis;
    const prefix = redis.options.keyPrefix ?? '';
    const keys = (await redis.keys(`${prefix}*failures*`)).map((k: string) => k.slice(prefix.length));
    expect(keys).toEqual(
      expect.arrayContaining([
        `failures:credentials:per-id-and-address:${client.app_id}|203.0.113.99`,
        `failures:credentials:per-id:${client.app_id}`,
        'failures:credentials:per-address:203.0.113.99',
      ]),
    );
    expect(keys.join(' ')).not.toContain('sk_');
  });
});
