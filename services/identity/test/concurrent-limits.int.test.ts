import request from 'supertest';
import type { Express } from 'express';
import { testLogger } from '@attest/testing';
import { buildApp, buildServices } from '../src/app';
import {
  ADMIN_TOKEN,
  basic,
  browserFlow,
  createApp,
  createUser,
  hidden,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

/*
 * Issue 23, item 2: every failure limit holds under concurrency. Each test sends its guesses at once
 * (Promise.all), on the embedded backend and, with TEST_DATABASE_URL and TEST_REDIS_URL, on Postgres
 * and Redis; a slot is taken before a secret is checked, so no more than the limit are checked.
 */

const WRONG = 'sk_000000000000000000000000000000000000000000000000';

type Response = request.Response;

/** A sign-in page ready to be posted: its agent (cookies) and hidden fields. */
async function signInPage(h: IdentityHarness, appId: string, from: string, server: Express = h.publicApp) {
  const agent = request.agent(server);
  const authorize = await agent
    .get('/authorize')
    .set('X-Forwarded-For', from)
    .query({ response_type: 'code', scope: 'openid', client_id: appId, redirect_uri: REDIRECT_URI });
  const page = await agent.get(authorize.headers.location).set('X-Forwarded-For', from);
  const fields = { interaction: hidden(page.text, 'interaction'), csrf: hidden(page.text, 'csrf') };
  return (username: string, password: string) =>
    agent
      .post('/signin')
      .set('X-Forwarded-For', from)
      .type('form')
      .send({ ...fields, username, password });
}

async function auditCount(h: IdentityHarness, type: string): Promise<number> {
  const res = await request(h.adminApp)
    .get(`/admin/audit?type=${type}&limit=1000`)
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .expect(200);
  return (res.body.events as unknown[]).length;
}

function expectRefusedPage(res: Response, policy: string, limit: number): void {
  expect(res.status).toBe(429);
  expect(res.text).toContain('Too many failed attempts');
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(900);
  expect(res.headers['ratelimit-policy']).toBe(`"${policy}";q=${limit};w=900`);
  expect(res.headers.ratelimit).toBe(`"${policy}";r=0;t=${retryAfter}`);
  expect(res.headers['set-cookie']?.toString() ?? '').not.toContain('attest_session');
}

describe('parallel wrong passwords at /signin (issue 23, item 2)', () => {
  let h: IdentityHarness;
  let app: { app_id: string };
  beforeAll(async () => {
    h = await identityHarness({
      TRUST_PROXY: 'true',
      SIGNIN_FAILURES_PER_USER_AND_ADDRESS: '10',
      SIGNIN_FAILURES_PER_ADDRESS: '30',
    });
    app = await createApp(h);
  });
  afterAll(() => h.close());

  it('80 guesses for one user at once: at most 10 are checked, the rest 429, and the right password is refused', async () => {
    const user = await createUser(h);
    const pages = await Promise.all(Array.from({ length: 81 }, () => signInPage(h, app.app_id, '203.0.113.20')));
    const before = await auditCount(h, 'signin.failed');
    const answers = await Promise.all(pages.slice(0, 80).map((post) => post(user.username, 'wrong password')));
    expect(answers.filter((r) => r.status === 400)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(70);
    expect((await auditCount(h, 'signin.failed')) - before).toBe(10);
    expectRefusedPage(
      answers.find((r) => r.status === 429)!,
      'per-user-and-address',
      10,
    );
    expectRefusedPage(await pages[80](user.username, user.password), 'per-user-and-address', 10);
    // elsewhere the user still signs in
    const elsewhere = await (await signInPage(h, app.app_id, '198.51.100.20'))(user.username, user.password);
    expect(elsewhere.status).toBe(303);
  });

  it('80 guesses for 80 users from one address at once: at most the per-address limit are checked', async () => {
    const users = await Promise.all(Array.from({ length: 81 }, () => createUser(h)));
    const pages = await Promise.all(users.map(() => signInPage(h, app.app_id, '203.0.113.21')));
    const before = await auditCount(h, 'signin.failed');
    const answers = await Promise.all(users.slice(0, 80).map((u, i) => pages[i](u.username, 'wrong password')));
    expect(answers.filter((r) => r.status === 400)).toHaveLength(30);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(50);
    expect((await auditCount(h, 'signin.failed')) - before).toBe(30);
    expectRefusedPage(
      answers.find((r) => r.status === 429)!,
      'per-address',
      30,
    );
    expectRefusedPage(await pages[80](users[80].username, users[80].password), 'per-address', 30);
  });

  it('a right password gives its slot back: parallel right and wrong passwords leave only the wrong ones counted', async () => {
    const user = await createUser(h);
    const pages = await Promise.all(Array.from({ length: 9 }, () => signInPage(h, app.app_id, '203.0.113.22')));
    const answers = await Promise.all(
      pages.slice(0, 8).map((post, i) => post(user.username, i < 4 ? user.password : 'wrong password')),
    );
    expect(answers.filter((r) => r.status === 303)).toHaveLength(4);
    expect(answers.filter((r) => r.status === 400)).toHaveLength(4);
    // the wrong ones that ran after a right one were forgotten with it; none of the right ones counted
    const next = await pages[8](user.username, 'wrong password');
    expect(next.status).toBe(400);
    const remaining = /"per-address";r=(\d+)/.exec(String(next.headers.ratelimit))?.[1];
    expect(Number(remaining)).toBe(30 - 5);
  });
});

describe('parallel wrong current passwords at /account/password (issue 23, item 2)', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    h = await identityHarness({ TRUST_PROXY: 'true', SIGNIN_FAILURES_PER_USER_AND_ADDRESS: '10' });
  });
  afterAll(() => h.close());

  it('80 at once: at most 10 are checked, the rest 429, and the right password is refused', async () => {
    const app = await createApp(h);
    const user = await createUser(h);
    const agent = request.agent(h.publicApp);
    await browserFlow(
      agent,
      { response_type: 'code', scope: 'openid', client_id: app.app_id, redirect_uri: REDIRECT_URI },
      user,
    );
    const page = await agent.get('/account').set('X-Forwarded-For', '203.0.113.30');
    expect(page.status).toBe(200);
    const csrf = hidden(page.text, 'csrf');
    const change = (current: string) =>
      agent.post('/account/password').set('X-Forwarded-For', '203.0.113.30').type('form').send({
        csrf,
        current_password: current,
        new_password: 'a new password 1',
        confirm_password: 'a new password 1',
      });
    const answers = await Promise.all(Array.from({ length: 80 }, () => change('wrong password')));
    expect(answers.filter((r) => r.status === 400)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(70);
    expectRefusedPage(
      answers.find((r) => r.status === 429)!,
      'per-user-and-address',
      10,
    );
    expectRefusedPage(await change(user.password), 'per-user-and-address', 10);
    // exactly 10 failures were counted from this address
    const other = await createUser(h);
    const post = await signInPage(h, app.app_id, '203.0.113.30');
    const next = await post(other.username, 'wrong password');
    expect(next.status).toBe(400);
    expect(next.headers.ratelimit).toMatch(/^"per-user-and-address";r=9;t=\d+, "per-address";r=89;t=\d+$/);
  });
});

describe('parallel wrong client secrets (issue 23, item 2)', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    h = await identityHarness({ TRUST_PROXY: 'loopback' });
  });
  afterAll(() => h.close());

  const post = (path: string, from: string, auth: string) =>
    request(h.publicApp)
      .post(path)
      .set('X-Forwarded-For', from)
      .set('Authorization', auth)
      .type('form')
      .send(
        path === '/token'
          ? { grant_type: 'authorization_code', code: 'f'.repeat(64), redirect_uri: REDIRECT_URI }
          : { token: 'a.b.c' },
      );

  it.each([
    ['/introspect', 1],
    ['/token', 2],
    ['/revoke', 3],
  ])('%s: 80 at once check at most 10 secrets (the per-id count shows it), the rest 429', async (path, n) => {
    const client = await createApp(h);
    const from = `203.0.113.4${n}`;
    const answers = await Promise.all(Array.from({ length: 80 }, () => post(path, from, basic(client.app_id, WRONG))));
    expect(answers.filter((r) => r.status === 401)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(70);
    const refused = answers.find((r) => r.status === 429)!;
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers.ratelimit).toMatch(/^"per-id-and-address";r=0;t=\d+$/);
    expect((await post(path, from, basic(client.app_id, client.client_secret))).status).toBe(429);
    // only the 10 checked secrets were counted against the client id
    const elsewhere = await post(path, `198.51.100.4${n}`, basic(client.app_id, WRONG));
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.ratelimit).toMatch(
      /^"per-id-and-address";r=9;t=\d+, "per-id";r=89;t=\d+, "per-address";r=199;t=\d+$/,
    );
  });

  it('parallel right secrets are never refused: a right secret holds no slot', async () => {
    const client = await createApp(h);
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => post('/introspect', '203.0.113.41', basic(client.app_id, client.client_secret))),
    );
    for (const r of answers) expect(r.body.code).toBe('invalid_token');
  });
});

const describeRedis = process.env.TEST_REDIS_URL ? describe : describe.skip;

describeRedis('parallel wrong passwords spread over two replicas sharing one Redis (issue 23, item 2)', () => {
  let h: IdentityHarness;
  let second: Express;
  let app: { app_id: string };
  beforeAll(async () => {
    h = await identityHarness({ TRUST_PROXY: 'true', SIGNIN_FAILURES_PER_USER_AND_ADDRESS: '10' });
    const deps = {
      config: h.config,
      storage: { ...h.storage, describe: { database: 'test', cache: 'test' } },
      logger: testLogger,
      readiness: { shuttingDown: false, checks: [] },
      adminToken: ADMIN_TOKEN,
    };
    second = (await buildApp(deps, buildServices(deps))).publicApp;
    app = await createApp(h);
  });
  afterAll(() => h.close());

  it('80 guesses, half on each replica: 10 checked in all, and the right password refused on both', async () => {
    const user = await createUser(h);
    const servers = [h.publicApp, second];
    const pages = await Promise.all(
      Array.from({ length: 82 }, (_, i) => signInPage(h, app.app_id, '203.0.113.50', servers[i % 2])),
    );
    const before = await auditCount(h, 'signin.failed');
    const answers = await Promise.all(pages.slice(0, 80).map((post) => post(user.username, 'wrong password')));
    expect(answers.filter((r) => r.status === 400)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(70);
    expect((await auditCount(h, 'signin.failed')) - before).toBe(10);
    expectRefusedPage(await pages[80](user.username, user.password), 'per-user-and-address', 10);
    expectRefusedPage(await pages[81](user.username, user.password), 'per-user-and-address', 10);
  });
});
