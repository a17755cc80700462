import request from 'supertest';
import {
  ADMIN_TOKEN,
  createApp,
  createUser,
  hidden,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

/*
 * Issue 23, item 4: failed passkey assertions and sign-ups are limited per address (PASSKEY_FAILURES_PER_ADDRESS,
 * SIGNUP_ATTEMPTS_PER_ADDRESS), with the same 429 as the other limits, and hold under parallel requests.
 * Sign-up tells a person that a username is taken, but every username checked counts, so one address
 * learns at most SIGNUP_ATTEMPTS_PER_ADDRESS answers per window.
 */

/** Right shape, but a credential id never registered. */
const fakeCredential = JSON.stringify({
  id: 'AAAAAAAAAAAAAAAAAAAAAA',
  rawId: 'AAAAAAAAAAAAAAAAAAAAAA',
  type: 'public-key',
  response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA' },
  clientExtensionResults: {},
});

function expectRefusedPage(res: request.Response, policy: string, limit: number, text: string): void {
  expect(res.status).toBe(429);
  expect(res.headers['content-type']).toMatch(/^text\/html/);
  expect(res.text).toContain(text);
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(900);
  expect(res.headers['ratelimit-policy']).toBe(`"${policy}";q=${limit};w=900`);
  expect(res.headers.ratelimit).toBe(`"${policy}";r=0;t=${retryAfter}`);
  expect(res.headers['set-cookie']?.toString() ?? '').not.toContain('attest_session=');
}

describe('passkey and sign-up limits per address (issue 23, item 4)', () => {
  let h: IdentityHarness;
  let app: { app_id: string };
  beforeAll(async () => {
    h = await identityHarness({
      TRUST_PROXY: 'true',
      SIGNUP_ENABLED: 'true',
      PASSKEY_FAILURES_PER_ADDRESS: '5',
      SIGNUP_ATTEMPTS_PER_ADDRESS: '5',
    });
    app = await createApp(h);
  });
  afterAll(() => h.close());

  /** A sign-in page from `from`: a poster for its form, with the page's passkey ceremony. */
  async function page(from: string) {
    const agent = request.agent(h.publicApp);
    const start = await agent
      .get('/authorize')
      .set('X-Forwarded-For', from)
      .query({ response_type: 'code', scope: 'openid', client_id: app.app_id, redirect_uri: REDIRECT_URI });
    const res = await agent.get(start.headers.location as string).set('X-Forwarded-For', from);
    const fields = { interaction: hidden(res.text, 'interaction'), csrf: hidden(res.text, 'csrf') };
    const ceremony = /name="ceremony" value="([0-9a-f]{64})"/.exec(res.text)![1];
    return {
      passkey: () =>
        agent
          .post('/signin')
          .set('X-Forwarded-For', from)
          .type('form')
          .send({ ...fields, method: 'passkey', ceremony, credential: fakeCredential }),
      signUp: (username: string) =>
        agent
          .post('/signup')
          .set('X-Forwarded-For', from)
          .type('form')
          .send({ ...fields, step: 'details', username }),
    };
  }

  const failedPasskeySignIns = async () => {
    const res = await request(h.adminApp)
      .get('/admin/audit?type=signin.failed&limit=1000')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .expect(200);
    return (res.body.events as { detail: { method?: string } }[]).filter((e) => e.detail.method === 'passkey').length;
  };

  it('30 failed passkey assertions at once from one address: 5 verified, the rest 429; other addresses unaffected', async () => {
    const pages = await Promise.all(Array.from({ length: 31 }, () => page('203.0.113.90')));
    const before = await failedPasskeySignIns();
    const answers = await Promise.all(pages.slice(0, 30).map((p) => p.passkey()));
    const failed = answers.filter((r) => r.status === 400);
    expect(failed).toHaveLength(5);
    expect(failed[0].text).toContain('This passkey is not registered here.');
    expect(failed[0].headers['ratelimit-policy']).toBe('"per-address-passkeys";q=5;w=900');
    expect(failed[0].headers.ratelimit).toMatch(/^"per-address-passkeys";r=[0-4];t=\d+$/);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(25);
    expect((await failedPasskeySignIns()) - before).toBe(5);
    expectRefusedPage(
      answers.find((r) => r.status === 429)!,
      'per-address-passkeys',
      5,
      'Too many failed attempts',
    );
    expectRefusedPage(await pages[30].passkey(), 'per-address-passkeys', 5, 'Too many failed attempts');
    // the limit is the address's: another address is answered normally
    const elsewhere = await (await page('198.51.100.90')).passkey();
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.headers.ratelimit).toMatch(/^"per-address-passkeys";r=4;t=\d+$/);
  });

  it('sign-up: 20 usernames checked at once from one address: 5 answered, the rest 429, free or taken', async () => {
    const taken = await Promise.all(Array.from({ length: 20 }, () => createUser(h)));
    const pages = await Promise.all(Array.from({ length: 21 }, () => page('203.0.113.91')));
    const answers = await Promise.all(taken.map((u, i) => pages[i].signUp(u.username)));
    const told = answers.filter((r) => r.status === 409);
    expect(told).toHaveLength(5);
    expect(told[0].text).toContain('That username is taken.');
    expect(told[0].headers['ratelimit-policy']).toBe('"per-address-signups";q=5;w=900');
    expect(answers.filter((r) => r.status === 429)).toHaveLength(15);
    const refused = answers.find((r) => r.status === 429)!;
    expectRefusedPage(refused, 'per-address-signups', 5, 'Too many sign-up attempts');
    // a refused answer says nothing about the name
    expect(refused.text).not.toContain('That username is taken.');
    expectRefusedPage(await pages[20].signUp('a-free-name'), 'per-address-signups', 5, 'Too many sign-up attempts');
    // a person elsewhere signs up as before, and learns of a taken name
    const elsewhere = await page('198.51.100.91');
    const busy = await elsewhere.signUp(taken[0].username);
    expect(busy.status).toBe(409);
    expect(busy.headers.ratelimit).toMatch(/^"per-address-signups";r=4;t=\d+$/);
    const free = await elsewhere.signUp('a-free-name');
    expect(free.status).toBe(200);
    expect(free.text).toContain('Create a passkey for a-free-name');
    expect(free.headers.ratelimit).toMatch(/^"per-address-signups";r=3;t=\d+$/);
  });
});
