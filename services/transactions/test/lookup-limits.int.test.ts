import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { Express } from 'express';
import { RedisCache } from '@attest/common';
import { testLogger } from '@attest/testing';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { buildApp } from '../src/app';
import {
  ADMIN_TOKEN,
  apiKeyFor,
  newAppId,
  recordTransaction,
  transactionsHarness,
  type TransactionsHarness,
} from './support';

type Response = request.Response;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const apiKey = (keyId: string, secret: string) => `api_${Buffer.from(`${keyId}:${secret}`).toString('base64url')}`;
const randomApiKey = () => apiKey(`key_${hex(16)}`, `sk_${hex(24)}`);
const keyIdOf = (key: string) => Buffer.from(key.slice(4), 'base64url').toString('utf8').split(':')[0];

async function burst(count: number, parallel: number, send: (i: number) => Promise<Response>): Promise<Response[]> {
  const out: Response[] = [];
  for (let start = 0; start < count; start += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - start) }, (_, j) => send(start + j));
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

function expectRefused(res: Response, policy: string): void {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    code: 'too_many_requests',
    detail: expect.stringMatching(/^Too many failed attempts; try again in \d+ seconds\.$/),
    attribute: null,
  });
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(900);
  expect(res.headers['ratelimit-policy']).toContain(`"${policy}";q=`);
  expect(res.headers.ratelimit).toBe(`"${policy}";r=0;t=${retryAfter}`);
}

describe('failed API-key authentication is limited (transactions)', () => {
  let h: TransactionsHarness;
  const appId = newAppId();
  let key: { api_key: string; key_id: string };
  let tx: Record<string, string>;
  beforeAll(async () => {
    h = await transactionsHarness({ TRUST_PROXY: 'loopback' });
    key = await apiKeyFor(h, appId);
    tx = await recordTransaction(h, appId);
  });
  afterAll(() => h.close());

  const lookup = (from: string, bearer: string) =>
    request(h.publicApp)
      .get(`/api/v2/client/transaction/${tx.transaction_id}`)
      .query({ app_id: appId, type: 'pay' })
      .set('X-Forwarded-For', from)
      .set('Authorization', `Bearer ${bearer}`);

  it('random API keys: 200 answers of 401 per address, then 429 even for a real key', async () => {
    const guesses = await burst(260, 50, (i) =>
      lookup('203.0.113.20', i % 10 === 0 ? `api_${hex(20)}` : randomApiKey()),
    );
    const failed = guesses.filter((r) => r.status === 401);
    expect(failed.length).toBe(200);
    expect(guesses.filter((r) => r.status === 429).length).toBe(60);
    expect(failed[0].body.code).toBe('unauthenticated');
    expectRefused(
      guesses.find((r) => r.status === 429)!,
      'per-address',
    );

    expectRefused(await lookup('203.0.113.20', key.api_key), 'per-address');
    const elsewhere = await lookup('203.0.113.21', key.api_key);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.reference).toBe(tx.reference);
  });

  it('guessed secrets for a real key id: 10 answers of 401, then 429 even for the right key', async () => {
    const guesses = await burst(40, 40, () => lookup('203.0.113.22', apiKey(key.key_id, `sk_${hex(24)}`)));
    expect(guesses.filter((r) => r.status === 401).length).toBe(10);
    expect(guesses.filter((r) => r.status === 429).length).toBe(30);
    const first = guesses.find((r) => r.status === 401)!;
    expect(first.headers['ratelimit-policy']).toBe(
      '"per-id-and-address";q=10;w=900, "per-id";q=100;w=900, "per-address";q=200;w=900',
    );
    expect(first.headers.ratelimit).toMatch(
      /^"per-id-and-address";r=\d;t=\d+, "per-id";r=\d+;t=\d+, "per-address";r=\d+;t=\d+$/,
    );
    expectRefused(
      guesses.find((r) => r.status === 429)!,
      'per-id-and-address',
    );
    expectRefused(await lookup('203.0.113.22', key.api_key), 'per-id-and-address');

    const otherApp = newAppId();
    const otherKey = await apiKeyFor(h, otherApp);
    const otherTx = await recordTransaction(h, otherApp);
    const other = await request(h.publicApp)
      .get(`/api/v2/client/transaction/${otherTx.transaction_id}`)
      .query({ app_id: otherApp, type: 'pay' })
      .set('X-Forwarded-For', '203.0.113.22')
      .set('Authorization', `Bearer ${otherKey.api_key}`);
    expect(other.status).toBe(200);
    expect((await lookup('203.0.113.23', key.api_key)).status).toBe(200);
  });

  it('documents the 429 with Retry-After and the RateLimit fields', async () => {
    const doc = (await request(h.publicApp).get('/openapi.json')).body;
    const refused = doc.paths['/api/v2/client/transaction/{transaction_id}'].get.responses['429'];
    expect(refused.description).toMatch(/^too_many_requests: /);
    expect(Object.keys(refused.headers)).toEqual(['Retry-After', 'RateLimit-Policy', 'RateLimit']);
  });
});

describe('per-id limit across addresses (transactions, small limit)', () => {
  let h: TransactionsHarness;
  const appId = newAppId();
  beforeAll(async () => {
    h = await transactionsHarness({ TRUST_PROXY: 'loopback', AUTH_FAILURES_PER_ID: '12' });
  });
  afterAll(() => h.close());

  it('refuses the key, once it failed 12 times, only from the addresses that failed: the others keep working', async () => {
    const key = await apiKeyFor(h, appId);
    const other = await apiKeyFor(h, appId);
    const tx = await recordTransaction(h, appId);
    const lookup = (from: string, bearer: string) =>
      request(h.publicApp)
        .get(`/api/v2/client/transaction/${tx.transaction_id}`)
        .query({ app_id: appId, type: 'pay' })
        .set('X-Forwarded-For', from)
        .set('Authorization', `Bearer ${bearer}`);
    for (let i = 0; i < 12; i++)
      expect((await lookup(`198.51.100.${i}`, apiKey(key.key_id, `sk_${hex(24)}`))).status).toBe(401);
    // anyone who knows a key id (it is in every key) can spend its failures: the merchant is not locked out
    expect((await lookup('198.51.100.100', key.api_key)).status).toBe(200);
    expectRefused(await lookup('198.51.100.0', key.api_key), 'per-id');
    expect((await lookup('198.51.100.101', apiKey(key.key_id, `sk_${hex(24)}`))).status).toBe(429);
    expectRefused(await lookup('198.51.100.101', key.api_key), 'per-id');
    expect(keyIdOf(other.api_key)).toBe(other.key_id);
    expect((await lookup('198.51.100.0', other.api_key)).status).toBe(200);
  });
});

const describeRedis = process.env.TEST_REDIS_URL ? describe : describe.skip;

describeRedis('two replicas sharing one Redis share the count (transactions)', () => {
  let h: TransactionsHarness;
  let second: Express;
  beforeAll(async () => {
    h = await transactionsHarness({ TRUST_PROXY: 'loopback' });
    const storage = { ...h.storage, describe: { database: 'test', cache: 'test' } };
    const deps = {
      config: h.config,
      storage,
      logger: testLogger,
      readiness: { shuttingDown: false, checks: [] },
      adminToken: ADMIN_TOKEN,
    };
    second = (await buildApp(deps)).publicApp;
  });
  afterAll(() => h.close());

  it('counts failures on either replica against one limit', async () => {
    const appId = newAppId();
    const key = await apiKeyFor(h, appId);
    const tx = await recordTransaction(h, appId);
    const lookup = (app: Express, bearer: string) =>
      request(app)
        .get(`/api/v2/client/transaction/${tx.transaction_id}`)
        .query({ app_id: appId, type: 'pay' })
        .set('X-Forwarded-For', '203.0.113.77')
        .set('Authorization', `Bearer ${bearer}`);
    for (let i = 0; i < 5; i++)
      expect((await lookup(h.publicApp, apiKey(key.key_id, `sk_${hex(24)}`))).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await lookup(second, apiKey(key.key_id, `sk_${hex(24)}`))).status).toBe(401);
    expectRefused(await lookup(h.publicApp, apiKey(key.key_id, `sk_${hex(24)}`)), 'per-id-and-address');
    expectRefused(await lookup(h.publicApp, key.api_key), 'per-id-and-address');
    expect((await lookup(second, key.api_key)).status).toBe(429);
  });
});

describe('with Redis unreachable (transactions)', () => {
  let h: TransactionsHarness;
  let down: RedisCache;
  let app: Express;
  beforeAll(async () => {
    h = await transactionsHarness({ TRUST_PROXY: 'loopback', API_KEY_CACHE_SECONDS: '0' });
    down = new RedisCache(`redis://127.0.0.1:${await freePort()}`, 'test:down:', testLogger);
    const storage = { ...h.storage, cache: down, describe: { database: 'test', cache: 'test' } };
    const deps = {
      config: h.config,
      storage,
      logger: testLogger,
      readiness: { shuttingDown: false, checks: [] },
      adminToken: ADMIN_TOKEN,
    };
    app = (await buildApp(deps)).publicApp;
  });
  afterAll(async () => {
    await down.close();
    await h.close();
  });

  it('a failed check answers 503 service_unavailable; a valid key still authenticates without Redis', async () => {
    const appId = newAppId();
    const key = await apiKeyFor(h, appId);
    const path = `/api/v2/client/transaction/0x${'1'.repeat(64)}`;
    const wrong = await request(app)
      .get(path)
      .query({ app_id: appId, type: 'pay' })
      .set('Authorization', `Bearer ${randomApiKey()}`);
    expect(wrong.status).toBe(503);
    expect(wrong.headers['retry-after']).toBe('5');
    expect(wrong.body).toEqual({
      code: 'service_unavailable',
      detail: 'The cache is temporarily unavailable; try again shortly.',
      attribute: null,
    });
    // another app's id: refused after the key was verified, before any lookup that needs the cache
    const valid = await request(app)
      .get(path)
      .query({ app_id: newAppId(), type: 'pay' })
      .set('Authorization', `Bearer ${key.api_key}`);
    expect(valid.status).toBe(403);
    expect(valid.body.code).toBe('invalid_app');
  });
});
