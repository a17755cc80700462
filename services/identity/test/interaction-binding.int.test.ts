import request from 'supertest';
import {
  callbackParams,
  createApp,
  createUser,
  hidden,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

/**
 * Issue 23 (trust review), item 9: a sign-in in progress (an interaction) belongs to the browser that
 * started it at /authorize; another browser cannot continue it at /signin or finish it at /consent.
 */
type Agent = ReturnType<typeof request.agent>;

describe('an interaction is bound to the browser that started it', () => {
  let h: IdentityHarness;
  let app: { app_id: string };

  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h, [REDIRECT_URI], 'Binding app');
  });
  afterAll(() => h.close());

  const query = (extra: Record<string, string> = {}) => ({
    response_type: 'code',
    scope: 'openid',
    client_id: app.app_id,
    redirect_uri: REDIRECT_URI,
    state: 's',
    nonce: 'n',
    ...extra,
  });
  const errorCode = (res: request.Response) => /id="error-code">([^<]*)</.exec(res.text)?.[1];

  /** A browser signed in as `user` (its own session), via a first sign-in and consent; and its CSRF cookie. */
  async function signedInBrowser(user: { username: string; password: string }): Promise<[Agent, string]> {
    const agent = request.agent(h.publicApp);
    const start = await agent.get('/authorize').query(query());
    const cookie = /attest_csrf=([0-9a-f]{64})/.exec(String(start.headers['set-cookie']))![1];
    const page = await agent.get(start.headers.location as string);
    const signedIn = await agent
      .post('/signin')
      .type('form')
      .send({
        interaction: hidden(page.text, 'interaction'),
        csrf: hidden(page.text, 'csrf'),
        username: user.username,
        password: user.password,
      });
    const consent = await agent.get(signedIn.headers.location as string);
    const done = await agent
      .post('/consent')
      .type('form')
      .send({
        interaction: hidden(consent.text, 'interaction'),
        csrf: hidden(consent.text, 'csrf'),
        decision: 'approve',
      });
    expect(callbackParams(done).code).toMatch(/^[0-9a-f]{64}$/);
    return [agent, cookie];
  }

  it('an interaction signed in (prompt=login) by one browser cannot be finished at /consent by another', async () => {
    const victim = await createUser(h);
    const attacker = await createUser(h);
    const [other, otherCookie] = await signedInBrowser(attacker);

    // the first browser starts a prompt=login request for an app it has not approved yet, and signs in
    const first = request.agent(h.publicApp);
    const start = await first.get('/authorize').query(query({ prompt: 'login', state: 'mine' }));
    const interaction = /interaction=([0-9a-f]{64})/.exec(start.headers.location as string)![1];
    const page = await first.get(`/signin?interaction=${interaction}`);
    await h.ctx.kernel.consents.withdraw(victim.user_id, app.app_id);
    const signedIn = await first
      .post('/signin')
      .type('form')
      .send({
        interaction,
        csrf: hidden(page.text, 'csrf'),
        username: victim.username,
        password: victim.password,
      });
    expect(signedIn.headers.location).toBe(`/consent?interaction=${interaction}`);

    // the other browser (its own session, its own CSRF cookie) tries to take the interaction over
    const shown = await other.get(`/consent?interaction=${interaction}`);
    expect([shown.status, errorCode(shown)]).toEqual([400, 'invalid_request']);
    expect(shown.text).not.toContain('name="decision"');
    const signin = await other.get(`/signin?interaction=${interaction}`);
    expect([signin.status, errorCode(signin)]).toEqual([400, 'invalid_request']);
    // with a CSRF token of its own for that interaction id (a valid double submit), still refused
    const { csrfToken } = await import('../src/kernel/csrf');
    const forgedCsrf = csrfToken(
      h.ctx.kernel,
      { cookies: { attest_csrf: otherCookie } } as never,
      { cookie: () => undefined } as never,
      interaction,
    );
    const taken = await other
      .post('/consent')
      .type('form')
      .send({ interaction, csrf: forgedCsrf, decision: 'approve' });
    expect([taken.status, errorCode(taken)]).toEqual([400, 'invalid_request']);
    expect(taken.headers.location).toBeUndefined();

    // the browser that started it finishes it
    const consent = await first.get(`/consent?interaction=${interaction}`);
    expect(consent.status).toBe(200);
    const done = await first
      .post('/consent')
      .type('form')
      .send({ interaction, csrf: hidden(consent.text, 'csrf'), decision: 'approve' });
    expect(callbackParams(done)).toMatchObject({ state: 'mine', code: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('a browser without the cookie it had at /authorize cannot continue the sign-in', async () => {
    const start = await request(h.publicApp).get('/authorize').query(query());
    expect(String(start.headers['set-cookie'])).toMatch(/attest_csrf=[0-9a-f]{64}/);
    const page = await request(h.publicApp).get(start.headers.location as string);
    expect([page.status, errorCode(page)]).toEqual([400, 'invalid_request']);
  });
});
