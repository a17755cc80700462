import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import {
  ADMIN_TOKEN,
  browserFlow,
  callbackParams,
  createUser,
  hidden,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

type Agent = ReturnType<typeof request.agent>;
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

/** An app backend that records the back-channel logout tokens it receives. */
function receiver() {
  const tokens: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      tokens.push(new URLSearchParams(body).get('logout_token') ?? '');
      res.end();
    });
  });
  return { server, tokens };
}

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!check()) throw new Error('condition not reached');
}

describe('account page: the user sees and ends their sessions', () => {
  let h: IdentityHarness;
  let app: { app_id: string };
  let user: { username: string; password: string; user_id: string };
  const rx = receiver();
  let decodeJwt: (typeof import('jose'))['decodeJwt'];

  beforeAll(async () => {
    ({ decodeJwt } = await import('jose'));
    await new Promise<void>((r) => rx.server.listen(0, '127.0.0.1', r));
    h = await identityHarness();
    const created = await request(h.adminApp)
      .post('/admin/apps')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({
        name: 'Sessions app',
        redirect_uris: [REDIRECT_URI],
        backchannel_logout_uri: `http://127.0.0.1:${(rx.server.address() as AddressInfo).port}/bcl`,
      });
    expect(created.status).toBe(201);
    app = created.body as { app_id: string };
  });
  beforeEach(async () => {
    user = await createUser(h);
  });
  afterAll(async () => {
    await h.close();
    await new Promise((r) => rx.server.close(r));
  });

  const query = (extra: Record<string, string> = {}) => ({
    response_type: 'code',
    scope: 'openid',
    client_id: app.app_id,
    redirect_uri: REDIRECT_URI,
    state: 's',
    nonce: 'n',
    ...extra,
  });

  /** A browser signed in to the app (its session takes part in back-channel logout). */
  async function inApp(userAgent = FIREFOX): Promise<Agent> {
    const agent = request.agent(h.publicApp).set('User-Agent', userAgent);
    expect(callbackParams(await browserFlow(agent, query(), user)).code).toMatch(/^[0-9a-f]{64}$/);
    return agent;
  }
  /** A browser signed in on the account page itself; returns it and the page. */
  async function onAccountPage(userAgent = CHROME): Promise<{ agent: Agent; page: request.Response }> {
    const agent = request.agent(h.publicApp).set('User-Agent', userAgent);
    const signin = await agent.get('/signin?next=account');
    const posted = await agent
      .post('/signin')
      .type('form')
      .send({ next: 'account', csrf: hidden(signin.text, 'csrf'), username: user.username, password: user.password });
    expect(posted.headers.location).toBe('/account');
    const page = await agent.get('/account');
    expect(page.status).toBe(200);
    return { agent, page };
  }
  const silent = async (agent: Agent) => callbackParams(await agent.get('/authorize').query(query({ prompt: 'none' })));
  const sessionIds = (html: string) => [...html.matchAll(/data-session-id="([0-9a-f]{32})"/g)].map((m) => m[1]);
  const currentId = (html: string) => /data-session-id="([0-9a-f]{32})" data-current/.exec(html)?.[1];

  it('lists each session with its device and times, this browser marked', async () => {
    await inApp(FIREFOX);
    const { page } = await onAccountPage(CHROME);
    const listed = await h.ctx.tokens.sessions.listForUser(user.user_id);
    expect(sessionIds(page.text).sort()).toEqual(listed.map((s) => s.id).sort());
    expect(listed).toHaveLength(2);
    const mine = listed.find((s) => s.device === 'Chrome on Windows')!;
    expect(currentId(page.text)).toBe(mine.id);
    expect(page.text).toContain('<strong>Firefox on Linux</strong>');
    expect(page.text).toMatch(/<strong>Chrome on Windows<\/strong> <span class="badge">this browser<\/span>/);
    expect(page.text).toContain(`signed in <time datetime="${new Date(mine.createdAt).toISOString()}">`);
    expect(page.text).toContain(' with a password');
    expect(page.text).toContain('last seen <time datetime=');
    expect(page.text).toContain('id="end-other-sessions"');
  });

  it('"End" needs the CSRF token, ends that session (the app is told through back-channel logout) and only the user\'s own', async () => {
    const phone = await inApp(FIREFOX);
    const { agent, page } = await onAccountPage(CHROME);
    const other = sessionIds(page.text).find((id) => id !== currentId(page.text))!;

    const forged = await agent.post('/account/sessions/end').type('form').send({ session_id: other });
    expect(forged.status).toBe(403);
    expect((await silent(phone)).code).toMatch(/^[0-9a-f]{64}$/);

    const someoneElse = await createUser(h);
    await browserFlow(request.agent(h.publicApp), query(), someoneElse);
    const [theirs] = await h.ctx.tokens.sessions.listForUser(someoneElse.user_id);
    const notMine = await agent
      .post('/account/sessions/end')
      .type('form')
      .send({ csrf: hidden(page.text, 'csrf'), session_id: theirs.id });
    expect(notMine.status).toBe(404);
    expect(notMine.text).toContain('That session has already ended.');
    expect(await h.ctx.tokens.sessions.listForUser(someoneElse.user_id)).toHaveLength(1);

    rx.tokens.length = 0;
    const ended = await agent
      .post('/account/sessions/end')
      .type('form')
      .send({ csrf: hidden(page.text, 'csrf'), session_id: other });
    expect(ended.status).toBe(303);
    expect(ended.headers.location).toBe('/account?notice=session-ended');
    expect(await silent(phone)).toMatchObject({ error: 'login_required' });
    await waitFor(() => rx.tokens.length === 1);
    const logout = decodeJwt(rx.tokens[0]);
    expect(logout.aud).toBe(app.app_id);
    expect(logout.sid).toMatch(/^[0-9a-f]+$/);

    const after = await agent.get('/account?notice=session-ended');
    expect(after.text).toContain('Session ended: that browser is signed out.');
    expect(sessionIds(after.text)).toEqual([currentId(page.text)]);
    expect(after.text).toContain('You are signed in nowhere else.');
  });

  it('"End all other sessions" keeps only this browser; ending this browser\'s session signs it out', async () => {
    const phone = await inApp(FIREFOX);
    const laptop = await inApp(CHROME);
    const { agent, page } = await onAccountPage(CHROME);
    expect(sessionIds(page.text)).toHaveLength(3);
    rx.tokens.length = 0;

    const ended = await agent
      .post('/account/sessions/end-others')
      .type('form')
      .send({ csrf: hidden(page.text, 'csrf') });
    expect(ended.status).toBe(303);
    expect(ended.headers.location).toBe('/account?notice=sessions-ended');
    expect(await silent(phone)).toMatchObject({ error: 'login_required' });
    expect(await silent(laptop)).toMatchObject({ error: 'login_required' });
    await waitFor(() => rx.tokens.length === 2);
    const still = await agent.get('/account');
    expect(still.status).toBe(200);
    expect(sessionIds(still.text)).toEqual([currentId(page.text)]);

    const out = await agent
      .post('/account/sessions/end')
      .type('form')
      .send({ csrf: hidden(still.text, 'csrf'), session_id: currentId(page.text) });
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe('/signin?next=account');
    expect(String(out.headers['set-cookie'])).toMatch(/attest_session=;/);
    expect(await h.ctx.tokens.sessions.listForUser(user.user_id)).toEqual([]);
    expect((await agent.get('/account')).headers.location).toBe('/signin?next=account');
  });
});
