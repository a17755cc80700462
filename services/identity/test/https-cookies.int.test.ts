import { createHmac } from 'node:crypto';
import request from 'supertest';
import { createApp, createUser, hidden, identityHarness, type IdentityHarness } from './support';

const HTTPS_BASE = 'https://id.example.test';
const CALLBACK = 'https://app.example.test/callback';

const setCookies = (res: request.Response): string[] => (res.headers['set-cookie'] as unknown as string[]) ?? [];
const cookieValue = (res: request.Response, name: string) =>
  new RegExp(`^${name}=([^;]*)`).exec(setCookies(res).find((c) => c.startsWith(`${name}=`)) ?? '')?.[1];

describe('https BASE_URL: HSTS and __Host- cookies (issue 23, item 15)', () => {
  let h: IdentityHarness;
  let app: { app_id: string };
  beforeAll(async () => {
    h = await identityHarness({ BASE_URL: HTTPS_BASE });
    app = await createApp(h, [CALLBACK]);
  });
  afterAll(() => h.close());

  const authorize = () =>
    request(h.publicApp)
      .get('/authorize')
      .query({ response_type: 'code', client_id: app.app_id, redirect_uri: CALLBACK, scope: 'openid', state: 's' });

  it('every public answer carries Strict-Transport-Security', async () => {
    for (const path of ['/.well-known/openid-configuration', '/jwks', '/healthz', '/no-such-page']) {
      const res = await request(h.publicApp).get(path);
      expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    }
    expect((await authorize()).headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });

  it('the CSRF and session cookies are __Host- (Secure, Path=/, no Domain), and a sign-in works with them', async () => {
    const user = await createUser(h);
    // /authorize gives the browser its CSRF cookie (the sign-in in progress is bound to it)
    const start = await authorize();
    const csrfCookie = setCookies(start).find((c) => c.startsWith('__Host-attest_csrf='))!;
    expect(csrfCookie).toMatch(/; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    expect(csrfCookie).not.toMatch(/Domain=/i);
    expect(setCookies(start).some((c) => c.startsWith('attest_csrf='))).toBe(false);
    const browser = cookieValue(start, '__Host-attest_csrf')!;
    const page = await request(h.publicApp)
      .get(start.headers.location as string)
      .set('Cookie', `__Host-attest_csrf=${browser}`);
    expect(page.status).toBe(200);
    const signedIn = await request(h.publicApp)
      .post('/signin')
      .set('Cookie', `__Host-attest_csrf=${browser}`)
      .type('form')
      .send({
        interaction: hidden(page.text, 'interaction'),
        csrf: hidden(page.text, 'csrf'),
        username: user.username,
        password: user.password,
      });
    expect(signedIn.status).toBe(303);
    const sessionCookie = setCookies(signedIn).find((c) => c.startsWith('__Host-attest_session='))!;
    expect(sessionCookie).toMatch(/; Path=\/; .*HttpOnly; Secure; SameSite=Lax$/);
    expect(sessionCookie).not.toMatch(/Domain=/i);

    // the session is read under its __Host- name only
    const session = cookieValue(signedIn, '__Host-attest_session')!;
    const account = await request(h.publicApp).get('/account').set('Cookie', `__Host-attest_session=${session}`);
    expect(account.status).toBe(200);
    const planted = await request(h.publicApp).get('/account').set('Cookie', `attest_session=${session}`);
    expect(planted.status).toBe(302);
  });

  it('a CSRF cookie planted by a sibling subdomain (no __Host- prefix) does not pass the check (login CSRF)', async () => {
    const attacker = await createUser(h);
    // the attacker starts a sign-in in their own browser: its CSRF cookie value and the form are theirs
    const start = await authorize();
    const planted = cookieValue(start, '__Host-attest_csrf')!;
    const page = await request(h.publicApp)
      .get(start.headers.location as string)
      .set('Cookie', `__Host-attest_csrf=${planted}`);
    expect(page.status).toBe(200);
    const interaction = hidden(page.text, 'interaction');
    const token = hidden(page.text, 'csrf');
    expect(token).toBe(createHmac('sha256', h.config.secret).update(`csrf:${planted}:${interaction}`).digest('hex'));
    // and plants that value without the prefix in the victim's browser, from a sibling subdomain
    const res = await request(h.publicApp)
      .post('/signin')
      .set('Cookie', `attest_csrf=${planted}`)
      .type('form')
      .send({ interaction, csrf: token, username: attacker.username, password: attacker.password });
    // the planted cookie is not read: this browser has no sign-in in progress (read as attest_csrf it would have one)
    expect(res.status).toBe(400);
    expect(res.text).toContain('This sign-in request has expired or is unknown');
    expect(setCookies(res).some((c) => /attest_session=/.test(c))).toBe(false);
  });
});

describe('http BASE_URL (pnpm start): plain cookie names, no Secure, no HSTS', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    h = await identityHarness();
  });
  afterAll(() => h.close());

  it('keeps attest_csrf without Secure and sends no HSTS', async () => {
    const page = await request(h.publicApp).get('/signin?next=account');
    expect(page.headers['strict-transport-security']).toBeUndefined();
    const csrf = setCookies(page).find((c) => c.startsWith('attest_csrf='))!;
    expect(csrf).toBeDefined();
    expect(csrf).not.toMatch(/Secure/);
  });
});
