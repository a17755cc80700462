import request from 'supertest';
import {
  BASE_URL,
  callbackParams,
  createApp,
  createUser,
  hidden,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

type Agent = ReturnType<typeof request.agent>;

describe('sign-in rotates the browser session', () => {
  let h: IdentityHarness;
  let app: { app_id: string };
  let user: { username: string; password: string };
  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h);
    user = await createUser(h);
  });
  afterAll(() => h.close());

  const base = (extra: Record<string, string> = {}) => ({
    response_type: 'code',
    scope: 'openid',
    client_id: app.app_id,
    redirect_uri: REDIRECT_URI,
    state: 's',
    ...extra,
  });
  const sessionCookieOf = (res: request.Response) =>
    /^attest_session=([^;]*)/.exec(
      ((res.headers['set-cookie'] as unknown as string[]) ?? []).find((c) => c.startsWith('attest_session=')) ?? '',
    )?.[1];

  /** /authorize → sign-in page → submit; returns the session cookie the sign-in set and its response. */
  async function signIn(
    agent: Agent,
    query: Record<string, string>,
  ): Promise<{ cookie: string; res: request.Response }> {
    const start = await agent.get('/authorize').query(query);
    const page = await agent.get(start.headers.location);
    expect(page.text).toContain('name="password"');
    const res = await agent
      .post('/signin')
      .type('form')
      .send({ interaction: hidden(page.text, 'interaction'), csrf: hidden(page.text, 'csrf'), ...user });
    expect(res.status).toBe(303);
    const cookie = sessionCookieOf(res);
    expect(cookie).toMatch(/^[0-9a-f]{64}$/);
    return { cookie: cookie!, res };
  }

  const silently = (cookie: string) =>
    request(h.publicApp)
      .get('/authorize')
      .query(base({ prompt: 'none' }))
      .set('Cookie', `attest_session=${cookie}`);

  it("a second sign-in ends the browser's old session: only the new cookie signs in silently", async () => {
    const agent = request.agent(h.publicApp);
    const first = await signIn(agent, base());
    const consent = await agent.get(first.res.headers.location);
    const approved = await agent
      .post('/consent')
      .type('form')
      .send({
        interaction: hidden(consent.text, 'interaction'),
        csrf: hidden(consent.text, 'csrf'),
        decision: 'approve',
      });
    expect(callbackParams(approved).code).toMatch(/^[0-9a-f]{64}$/);
    expect(callbackParams(await silently(first.cookie)).code).toMatch(/^[0-9a-f]{64}$/);

    // the agent sends cookie A with the second sign-in
    const second = await signIn(agent, base({ prompt: 'login' }));
    expect(second.cookie).not.toBe(first.cookie);
    expect(callbackParams(second.res).code).toMatch(/^[0-9a-f]{64}$/);

    expect(callbackParams(await silently(first.cookie))).toEqual({
      error: 'login_required',
      error_description: expect.any(String),
      iss: BASE_URL,
      state: 's',
    });
    expect(callbackParams(await silently(second.cookie)).code).toMatch(/^[0-9a-f]{64}$/);
    expect(await h.ctx.tokens.sessions.find(first.cookie)).toBeNull();
    expect(await h.ctx.tokens.sessions.find(second.cookie)).toMatchObject({
      userId: expect.any(String),
      authTime: expect.any(Number),
      amr: ['pwd'],
    });
  });
});
