import request from 'supertest';
import { createApp, createUser, hidden, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';

interface Fixture {
  h: IdentityHarness;
  app: { app_id: string };
  user: { username: string; password: string };
}

async function fixture(env: NodeJS.ProcessEnv): Promise<Fixture> {
  const h = await identityHarness(env);
  return { h, app: await createApp(h), user: await createUser(h) };
}

/** authorize → sign-in page → POST /signin, every request claiming X-Forwarded-For: forwardedFor. */
async function attempt(f: Fixture, forwardedFor: string, password: string) {
  const agent = request.agent(f.h.publicApp);
  let res = await agent
    .get('/authorize')
    .set('X-Forwarded-For', forwardedFor)
    .query({ response_type: 'code', scope: 'openid', client_id: f.app.app_id, redirect_uri: REDIRECT_URI });
  res = await agent.get(res.headers.location).set('X-Forwarded-For', forwardedFor);
  return agent
    .post('/signin')
    .set('X-Forwarded-For', forwardedFor)
    .type('form')
    .send({
      interaction: hidden(res.text, 'interaction'),
      csrf: hidden(res.text, 'csrf'),
      username: f.user.username,
      password,
    });
}

function expectRefusedPage(res: request.Response): void {
  expect(res.status).toBe(429);
  expect(res.headers['content-type']).toMatch(/^text\/html/);
  expect(res.text).toContain('Too many failed attempts');
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(900);
  expect(res.headers['ratelimit-policy']).toBe('"per-user-and-address";q=10;w=900');
  expect(res.headers.ratelimit).toBe(`"per-user-and-address";r=0;t=${retryAfter}`);
  expect(res.headers['set-cookie']?.toString() ?? '').not.toContain('attest_session');
}

describe('sign-in attempt limits', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({ TRUST_PROXY: 'true' });
  });
  afterAll(() => f.h.close());

  it('stops a source after 10 failures for a user, without locking the user out elsewhere', async () => {
    const first = await attempt(f, '203.0.113.7', 'wrong password');
    expect(first.status).toBe(400);
    expect(first.headers['ratelimit-policy']).toBe('"per-user-and-address";q=10;w=900, "per-address";q=100;w=900');
    expect(first.headers.ratelimit).toMatch(/^"per-user-and-address";r=9;t=\d+, "per-address";r=99;t=\d+$/);
    for (let i = 1; i < 10; i++) expect((await attempt(f, '203.0.113.7', 'wrong password')).status).toBe(400);
    expectRefusedPage(await attempt(f, '203.0.113.7', f.user.password));
    const elsewhere = await attempt(f, '198.51.100.9', f.user.password);
    expect(elsewhere.status).toBe(303);
    expect(elsewhere.headers['set-cookie']?.toString()).toContain('attest_session');
  });
});

describe('TRUST_PROXY as a list of proxies (issue #9, defect 6)', () => {
  it('ignores X-Forwarded-For from a peer outside the list: the limit applies to the real peer', async () => {
    const f = await fixture({ TRUST_PROXY: 'uniquelocal, 10.0.0.0/8, 192.0.2.0/24' });
    try {
      for (let i = 0; i < 10; i++)
        expect((await attempt(f, `203.0.113.${100 + i}`, 'wrong password')).status).toBe(400);
      expectRefusedPage(await attempt(f, '198.51.100.200', f.user.password));
    } finally {
      await f.h.close();
    }
  });

  it('honours X-Forwarded-For from a trusted peer', async () => {
    const f = await fixture({ TRUST_PROXY: 'loopback, 10.0.0.0/8' });
    try {
      for (let i = 0; i < 10; i++) expect((await attempt(f, '203.0.113.50', 'wrong password')).status).toBe(400);
      expectRefusedPage(await attempt(f, '203.0.113.50', f.user.password));
      expect((await attempt(f, '198.51.100.60', f.user.password)).status).toBe(303);
    } finally {
      await f.h.close();
    }
  });
});
