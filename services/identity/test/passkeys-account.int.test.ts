import request from 'supertest';
import {
  basic,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  hidden,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

const authorizeQuery = (clientId: string) => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: REDIRECT_URI,
  scope: 'openid profile',
  state: 's',
});

/** A credential-shaped answer from a "browser": right shape, but for a credential id we never registered. */
const fakeCredential = (id = 'AAAAAAAAAAAAAAAAAAAAAA') =>
  JSON.stringify({
    id,
    rawId: id,
    type: 'public-key',
    response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA' },
    clientExtensionResults: {},
  });

describe('passkey routes and the account page', () => {
  let h: IdentityHarness;
  let app: { app_id: string; client_secret: string };

  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h, [REDIRECT_URI], 'Account test app');
  });
  afterAll(() => h.close());

  /** The sign-in page of a new authorization request, with its form fields. */
  async function signInPage(agent: ReturnType<typeof request.agent>) {
    const start = await agent.get('/authorize').query(authorizeQuery(app.app_id));
    const page = await agent.get(start.headers.location as string);
    expect(page.status).toBe(200);
    const ceremony = /name="ceremony" value="([0-9a-f]{64})"/.exec(page.text)?.[1];
    return {
      page,
      interaction: hidden(page.text, 'interaction'),
      csrf: hidden(page.text, 'csrf'),
      ceremony: ceremony!,
    };
  }

  it('serves the pages with a strict CSP: nonce scripts, no framing, no referrer, one stylesheet', async () => {
    const { page } = await signInPage(request.agent(h.publicApp));
    const csp = page.headers['content-security-policy'] as string;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.text).toContain(`<script nonce="${nonce}" src="/assets/simplewebauthn-browser.js"></script>`);
    expect(page.text).toContain('<link rel="stylesheet" href="/assets/style.css">');
    const bundle = await request(h.publicApp).get('/assets/simplewebauthn-browser.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(bundle.text).toContain('SimpleWebAuthnBrowser');
    const css = await request(h.publicApp).get('/assets/style.css');
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('passkey sign-in: an unknown credential is refused, and its challenge cannot be used again', async () => {
    const agent = request.agent(h.publicApp);
    const { interaction, csrf, ceremony } = await signInPage(agent);
    const form = { interaction, csrf, method: 'passkey', ceremony, credential: fakeCredential() };
    const first = await agent.post('/signin').type('form').send(form);
    expect(first.status).toBe(400);
    expect(first.text).toContain('This passkey is not registered here.');
    expect(first.headers['set-cookie']?.toString() ?? '').not.toContain('attest_session=');
    const again = await agent.post('/signin').type('form').send(form);
    expect(again.status).toBe(400);
    expect(again.text).toContain('That passkey request has expired or was already used.');
  });

  it('passkey sign-in: an expired challenge and one of another browser are refused', async () => {
    const agent = request.agent(h.publicApp);
    const { interaction, csrf, ceremony } = await signInPage(agent);
    // the ceremony id carries its expiry (nothing is stored): past PASSKEY_CHALLENGE_TTL_SECONDS
    const now = Date.now();
    const later = jest.spyOn(Date, 'now').mockReturnValue(now + (h.config.PASSKEY_CHALLENGE_TTL_SECONDS + 1) * 1000);
    const expired = await agent
      .post('/signin')
      .type('form')
      .send({ interaction, csrf, method: 'passkey', ceremony, credential: fakeCredential() })
      .then(
        (res) => (later.mockRestore(), res),
        (err: unknown) => {
          later.mockRestore();
          throw err;
        },
      );
    expect(expired.status).toBe(400);
    expect(expired.text).toContain('That passkey request has expired or was already used.');

    // another browser (its own CSRF cookie) cannot use this page's challenge
    const mine = await signInPage(agent);
    const other = request.agent(h.publicApp);
    const theirs = await signInPage(other);
    const stolen = await other.post('/signin').type('form').send({
      interaction: theirs.interaction,
      csrf: theirs.csrf,
      method: 'passkey',
      ceremony: mine.ceremony,
      credential: fakeCredential(),
    });
    expect(stolen.text).toContain('That passkey request has expired or was already used.');
  });

  it('sign-up: username step, then the passkey step; a taken username and a reused challenge are refused', async () => {
    const agent = request.agent(h.publicApp);
    const { interaction, csrf } = await signInPage(agent);
    const taken = await createUser(h);
    const busy = await agent
      .post('/signup')
      .type('form')
      .send({ interaction, csrf, step: 'details', username: taken.username });
    expect(busy.status).toBe(409);
    expect(busy.text).toContain('That username is taken.');
    const bad = await agent.post('/signup').type('form').send({ interaction, csrf, step: 'details', username: 'a b' });
    expect(bad.status).toBe(400);
    const step2 = await agent
      .post('/signup')
      .type('form')
      .send({ interaction, csrf, step: 'details', username: 'newcomer', name: 'New Comer' });
    expect(step2.status).toBe(200);
    const options = JSON.parse(/data-options="([^"]+)"/.exec(step2.text)![1].replace(/&quot;/g, '"')) as {
      rp: { id: string };
      user: { name: string };
      authenticatorSelection: { residentKey: string };
    };
    expect(options.rp.id).toBe('localhost');
    expect(options.user.name).toBe('newcomer');
    expect(options.authenticatorSelection.residentKey).toBe('required');
    const ceremony = /name="ceremony" value="([0-9a-f]{64})"/.exec(step2.text)![1];
    const form = { interaction, csrf, step: 'passkey', ceremony, credential: fakeCredential() };
    const invalid = await agent.post('/signup').type('form').send(form);
    expect(invalid.status).toBe(400);
    expect(invalid.text).toContain('The passkey could not be verified.');
    const reused = await agent.post('/signup').type('form').send(form);
    expect(reused.text).toContain('That passkey request has expired or was already used.');
    expect(await h.ctx.kernel.users.findByUsername('newcomer')).toBeNull();
  });

  it('sign-up turned off: 403 signup_disabled, and the sign-in page offers no link', async () => {
    const off = await identityHarness({ SIGNUP_ENABLED: 'false' }, { db: h.storage.db });
    try {
      const offApp = await createApp(off);
      const agent = request.agent(off.publicApp);
      const start = await agent.get('/authorize').query(authorizeQuery(offApp.app_id));
      const page = await agent.get(start.headers.location as string);
      expect(page.text).not.toContain('/signup');
      const res = await agent.get(`/signup?interaction=${hidden(page.text, 'interaction')}`);
      expect(res.status).toBe(403);
      expect(res.text).toContain('signup_disabled');
      const posted = await agent
        .post('/signup')
        .type('form')
        .send({
          interaction: hidden(page.text, 'interaction'),
          csrf: hidden(page.text, 'csrf'),
          step: 'details',
          username: 'someone',
        });
      expect(posted.status).toBe(403);
    } finally {
      await off.close();
    }
  });

  it('account page: sign-in first, then back; forms need the CSRF token', async () => {
    const agent = request.agent(h.publicApp);
    const anonymous = await agent.get('/account');
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.location).toBe('/signin?next=account');
    const refused = await agent.post('/account/consents/withdraw').type('form').send({ app_id: app.app_id });
    expect(refused.status).toBe(303);
    expect(refused.headers.location).toBe('/signin?next=account');

    const user = await createUser(h);
    const page = await agent.get('/signin?next=account');
    expect(page.text).toContain('Sign in to your account');
    const signedIn = await agent
      .post('/signin')
      .type('form')
      .send({ next: 'account', csrf: hidden(page.text, 'csrf'), username: user.username, password: user.password });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.location).toBe('/account');
    const account = await agent.get('/account');
    expect(account.status).toBe(200);
    expect(account.text).toContain(user.username);
    expect(account.headers['content-security-policy']).toContain("frame-ancestors 'none'");

    const noCsrf = await agent
      .post('/account/password')
      .type('form')
      .send({ current_password: user.password, new_password: 'a new password', confirm_password: 'a new password' });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.text).toContain('invalid_csrf');
    const csrf = hidden(account.text, 'csrf');
    const wrong = await agent
      .post('/account/password')
      .type('form')
      .send({ csrf, current_password: 'not it', new_password: 'a new password', confirm_password: 'a new password' });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('Your current password is wrong.');
    const changed = await agent.post('/account/password').type('form').send({
      csrf,
      current_password: user.password,
      new_password: 'a new password',
      confirm_password: 'a new password',
    });
    expect(changed.status).toBe(303);
    expect(changed.headers.location).toBe('/account?notice=password-changed');
    const again = await request.agent(h.publicApp).get('/signin?next=account');
    expect(again.status).toBe(200);
    const stored = await h.ctx.kernel.users.findByUsername(user.username);
    const { verifyPassword } = await import('../src/kernel/crypto');
    expect(await verifyPassword('a new password', stored!.passwordHash!)).toBe(true);
  });

  it("withdrawing consent on the account page stops the app's tokens and the app must ask again", async () => {
    const user = await createUser(h);
    const agent = request.agent(h.publicApp);
    const done = await browserFlow(agent, authorizeQuery(app.app_id), user);
    const { code } = callbackParams(done);
    const token = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(token.status).toBe(200);
    const accessToken = token.body.access_token as string;
    expect((await request(h.publicApp).post('/userinfo').set('Authorization', `Bearer ${accessToken}`)).status).toBe(
      200,
    );

    const account = await agent.get('/account');
    expect(account.text).toContain('Account test app');
    const withdrawn = await agent
      .post('/account/consents/withdraw')
      .type('form')
      .send({ csrf: hidden(account.text, 'csrf'), app_id: app.app_id });
    expect(withdrawn.status).toBe(303);
    expect(withdrawn.headers.location).toBe('/account?notice=withdrawn');
    expect(await h.ctx.kernel.consents.find(user.user_id, app.app_id)).toEqual([]);

    const userinfo = await request(h.publicApp).post('/userinfo').set('Authorization', `Bearer ${accessToken}`);
    expect(userinfo.status).toBe(401);
    const introspect = await request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ token: accessToken });
    expect(introspect.body).toEqual({ active: false });
    const asked = await agent.get('/authorize').query(authorizeQuery(app.app_id));
    expect(asked.headers.location).toMatch(/^\/consent\?interaction=/);
  });
});
