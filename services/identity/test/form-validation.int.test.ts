import request from 'supertest';
import {
  BASE_URL,
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

/**
 * What each form endpoint answers for a missing, empty, repeated, unexpected or unknown field, and in which
 * order the checks run: the wire contract relying parties are built against, whichever code enforces it.
 */
describe('form fields: the errors and their order', () => {
  let h: IdentityHarness;
  let app: { app_id: string; client_secret: string };
  let user: { username: string; password: string };
  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h);
    user = await createUser(h);
  });
  afterAll(() => h.close());

  const post = (path: string, form: string, auth: string | null = basic(app.app_id, app.client_secret)) => {
    const req = request(h.publicApp).post(path).type('form');
    return (auth ? req.set('Authorization', auth) : req).send(form);
  };
  const given = (name: string) => ({
    code: 'invalid_request',
    detail: `The ${name} parameter must be given once.`,
    attribute: name,
  });
  const oauth = (body: { code: string; detail: string; attribute: string }, error = 'invalid_request') => ({
    ...body,
    error,
    error_description: body.detail,
  });
  const required = (attribute: string) => ({ code: 'required', detail: 'This attribute is required.', attribute });
  const grantType = {
    code: 'invalid_grant_type',
    detail:
      'Invalid grant type. Supported: authorization_code, refresh_token, client_credentials, ' +
      'urn:ietf:params:oauth:grant-type:device_code, urn:ietf:params:oauth:grant-type:token-exchange.',
    attribute: 'grant_type',
  };
  /** An HTML error page as the fields it shows. */
  const shown = (res: request.Response) => ({
    status: res.status,
    code: /id="error-code">([^<]*)</.exec(res.text)?.[1],
    detail: /<p class="error" role="alert">([^<]*)</.exec(res.text)?.[1],
    attribute: /id="error-attribute">([^<]*)</.exec(res.text)?.[1],
  });
  const unknownCode = `grant_type=authorization_code&code=${'c'.repeat(64)}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`;

  describe('POST /token', () => {
    it.each([
      ['an empty grant_type', 'grant_type=&code=x', 400, oauth(grantType, 'unsupported_grant_type')],
      [
        'an unknown grant_type before a missing code',
        'grant_type=password',
        400,
        oauth(grantType, 'unsupported_grant_type'),
      ],
      [
        'a repeated grant_type',
        'grant_type=authorization_code&grant_type=authorization_code&code=x',
        400,
        oauth(given('grant_type')),
      ],
      [
        'a repeated grant_type, one of them unknown',
        'grant_type=x&grant_type=authorization_code',
        400,
        oauth(given('grant_type')),
      ],
      ['an empty code', 'grant_type=authorization_code&code=&redirect_uri=x', 400, oauth(required('code'))],
      ['a repeated code', 'grant_type=authorization_code&code=a&code=b&redirect_uri=x', 400, oauth(given('code'))],
      [
        'a missing code before a repeated redirect_uri',
        'grant_type=authorization_code&redirect_uri=a&redirect_uri=b',
        400,
        oauth(required('code')),
      ],
      [
        'a repeated redirect_uri',
        'grant_type=authorization_code&code=a&redirect_uri=a&redirect_uri=b',
        400,
        oauth(given('redirect_uri')),
      ],
      [
        'an empty redirect_uri',
        'grant_type=authorization_code&code=a&redirect_uri=',
        400,
        oauth(required('redirect_uri')),
      ],
      [
        'a repeated code_verifier',
        `${unknownCode}&code_verifier=a&code_verifier=b`,
        400,
        oauth(given('code_verifier')),
      ],
    ])('%s', async (_what, form, status, body) => {
      const res = await post('/token', form);
      expect(res.status).toBe(status);
      expect(res.body).toEqual(body);
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('credentials are checked before the grant: a repeated client_id, then wrong credentials', async () => {
      const twice = await post('/token', `client_id=${app.app_id}&client_id=${app.app_id}&grant_type=nope`);
      expect([twice.status, twice.body]).toEqual([400, oauth(given('client_id'))]);
      const wrong = await post('/token', 'grant_type=nope', basic(app.app_id, 'sk_wrong'));
      expect([wrong.status, wrong.body.code, wrong.body.error]).toEqual([401, 'unauthenticated', 'invalid_client']);
    });

    it('ignores unknown parameters, repeated or not, and an empty code_verifier', async () => {
      const res = await post('/token', `${unknownCode}&scope=a&scope=b&resource=x&code_verifier=`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_grant', error: 'invalid_grant' });
    });

    it('a repeated client_secret is refused when it is the credential, ignored beside a Basic header', async () => {
      const asPost = await post(
        '/token',
        `${unknownCode}&client_id=${app.app_id}&client_secret=${app.client_secret}&client_secret=x`,
        null,
      );
      expect([asPost.status, asPost.body]).toEqual([400, oauth(given('client_secret'))]);
      const beside = await post('/token', `${unknownCode}&client_secret=a&client_secret=b`);
      expect([beside.status, beside.body.code]).toEqual([400, 'invalid_grant']);
    });
  });

  describe.each(['/introspect', '/revoke'])('POST %s', (path) => {
    it('token: empty is missing, repeated is refused, both before the credentials are looked at', async () => {
      const empty = await post(path, 'token=', null);
      expect([empty.status, empty.body]).toEqual([400, required('token')]);
      const twice = await post(path, 'token=a&token=b', null);
      expect([twice.status, twice.body]).toEqual([400, given('token')]);
      const noAuth = await post(path, 'token=a&client_id=x&client_id=y', null);
      if (path === '/introspect') expect([noAuth.status, noAuth.body.code]).toEqual([401, 'unauthenticated']);
      // /revoke takes a public client's client_id as its credential (RFC 7009 §2.1): given twice, it is
      // refused as at /token, before any app is looked up
      else expect([noAuth.status, noAuth.body]).toEqual([400, given('client_id')]);
    });

    it('ignores unknown parameters, repeated or not', async () => {
      const res = await post(path, 'token=not-a-token&foo=1&foo=2');
      expect(res.status).toBe(path === '/revoke' ? 200 : 401);
      if (path === '/introspect') expect(res.body.code).toBe('invalid_token');
    });
  });

  it('POST /revoke: a repeated token_type_hint is refused once the app is known', async () => {
    const res = await post('/revoke', 'token=x&token_type_hint=a&token_type_hint=b');
    expect([res.status, res.body]).toEqual([400, given('token_type_hint')]);
    const noAuth = await post('/revoke', 'token=x&token_type_hint=a&token_type_hint=b', null);
    expect([noAuth.status, noAuth.body.code]).toEqual([401, 'unauthenticated']);
  });

  describe('POST /consent', () => {
    /** A signed-in browser on the consent page: its agent, interaction and CSRF token. */
    async function atConsent() {
      const agent = request.agent(h.publicApp);
      const page = await browserFlow(
        agent,
        { response_type: 'code', scope: 'openid', client_id: app.app_id, redirect_uri: REDIRECT_URI, state: 's1' },
        user,
        'approve',
      ).then(async (res) => {
        // browserFlow approves; stop before that: start again and read the page
        expect(res.status).toBe(303);
        const again = await agent.get('/authorize').query({
          response_type: 'code',
          scope: 'openid',
          client_id: app.app_id,
          redirect_uri: REDIRECT_URI,
          prompt: 'consent',
        });
        return agent.get(again.headers.location as string);
      });
      expect(page.text).toContain('name="decision"');
      return { agent, interaction: hidden(page.text, 'interaction'), csrf: hidden(page.text, 'csrf') };
    }

    it.each([
      ['no decision', ''],
      ['an empty decision', '&decision='],
      ['an unknown decision', '&decision=maybe'],
      ['a repeated decision', '&decision=approve&decision=approve'],
    ])('%s: 400 invalid_parameter naming decision', async (_what, extra) => {
      const { agent, interaction, csrf } = await atConsent();
      const res = await agent.post('/consent').type('form').send(`interaction=${interaction}&csrf=${csrf}${extra}`);
      expect(shown(res)).toEqual({
        status: 400,
        code: 'invalid_parameter',
        detail: 'decision must be approve or deny.',
        attribute: 'decision',
      });
    });

    it('the interaction is checked first, then the CSRF token, then the decision', async () => {
      const { agent, interaction, csrf } = await atConsent();
      const send = (form: string) => agent.post('/consent').type('form').send(form);
      for (const form of [`csrf=${csrf}&decision=x`, `interaction=${interaction}&interaction=${interaction}&csrf=x`]) {
        const res = await send(form);
        expect(shown(res)).toMatchObject({ status: 400, code: 'invalid_request', attribute: 'interaction' });
      }
      for (const form of [
        `interaction=${interaction}&decision=x`,
        `interaction=${interaction}&csrf=${csrf}&csrf=${csrf}`,
      ]) {
        const res = await send(form);
        expect(shown(res)).toMatchObject({ status: 403, code: 'invalid_csrf', attribute: 'csrf' });
      }
      const denied = await send(`interaction=${interaction}&csrf=${csrf}&decision=deny&extra=1&extra=2`);
      expect(denied.status).toBe(303);
      expect(callbackParams(denied)).toMatchObject({ error: 'access_denied' });
    });
  });

  describe('POST /logout/confirm', () => {
    async function atConfirm() {
      const agent = request.agent(h.publicApp);
      await browserFlow(
        agent,
        { response_type: 'code', scope: 'openid', client_id: app.app_id, redirect_uri: REDIRECT_URI },
        user,
      );
      const page = await agent.get('/logout');
      expect(page.text).toContain('name="decision"');
      return { agent, csrf: hidden(page.text, 'csrf') };
    }
    const send = (agent: ReturnType<typeof request.agent>, form: string) =>
      agent.post('/logout/confirm').type('form').send(form);

    it.each([
      ['no decision', ''],
      ['an unknown decision', '&decision=maybe'],
      ['a repeated decision', '&decision=logout&decision=logout'],
    ])('%s: 400 invalid_parameter naming decision', async (_what, extra) => {
      const { agent, csrf } = await atConfirm();
      const res = await send(agent, `csrf=${csrf}${extra}`);
      expect(shown(res)).toEqual({
        status: 400,
        code: 'invalid_parameter',
        detail: 'decision must be logout or stay.',
        attribute: 'decision',
      });
    });

    it('the CSRF token first, then a repeated parameter, then the decision; an unknown field is ignored once', async () => {
      const { agent, csrf } = await atConfirm();
      for (const form of ['decision=logout', `csrf=${csrf}&csrf=${csrf}&decision=logout`, 'csrf=&decision=x']) {
        const res = await send(agent, form);
        expect(shown(res)).toMatchObject({ status: 403, code: 'invalid_csrf', attribute: 'csrf' });
      }
      const twice = await send(agent, `csrf=${csrf}&state=a&state=b&decision=x`);
      expect(shown(twice)).toMatchObject({ status: 400, code: 'invalid_request', attribute: 'state' });
      // as at /logout, any parameter given twice is refused, a known one or not
      const unknownTwice = await send(agent, `csrf=${csrf}&decision=stay&foo=1&foo=2`);
      expect(shown(unknownTwice)).toMatchObject({ status: 400, code: 'invalid_request', attribute: 'foo' });
      const stay = await send(agent, `csrf=${csrf}&decision=stay&foo=1`);
      expect(stay.status).toBe(200);
      expect((await agent.get('/account')).status).toBe(200);
    });
  });

  describe('the account forms', () => {
    /** A browser signed in to /account: its agent and the page's CSRF token. */
    async function onAccount() {
      const person = await createUser(h);
      const agent = request.agent(h.publicApp);
      const page = await agent.get('/signin?next=account');
      const signedIn = await agent
        .post('/signin')
        .type('form')
        .send({
          next: 'account',
          csrf: hidden(page.text, 'csrf'),
          username: person.username,
          password: person.password,
        });
      expect(signedIn.headers.location).toBe('/account');
      const account = await agent.get('/account');
      return { agent, person, csrf: hidden(account.text, 'csrf') };
    }
    const accountError = (res: request.Response) => ({
      status: res.status,
      error: /id="account-error">([^<]*)</.exec(res.text)?.[1],
    });

    it.each([
      ['/account/consents/withdraw', 'app_id', 404, 'That app has no access to withdraw.'],
      ['/account/passkeys/remove', 'passkey_id', 404, 'No such passkey on your account.'],
      ['/account/sessions/end', 'session_id', 404, 'That session has already ended.'],
    ])('%s: a missing, empty or repeated %s is one that does not exist', async (path, name, status, error) => {
      const { agent, csrf } = await onAccount();
      for (const extra of ['', `&${name}=`, `&${name}=a&${name}=b`]) {
        const res = await agent.post(path).type('form').send(`csrf=${csrf}${extra}&unknown=1&unknown=2`);
        expect(accountError(res)).toEqual({ status, error });
      }
    });

    it('a missing or repeated CSRF token: 403 before the fields are looked at', async () => {
      const { agent, csrf } = await onAccount();
      for (const form of ['app_id=x', `csrf=${csrf}&csrf=${csrf}&app_id=x`, 'csrf=&app_id=x']) {
        const res = await agent.post('/account/consents/withdraw').type('form').send(form);
        expect(shown(res)).toMatchObject({ status: 403, code: 'invalid_csrf', attribute: 'csrf' });
      }
    });

    it('/account/password: the current password first (a missing one counts as wrong), then the length, then the match', async () => {
      const { agent, csrf, person } = await onAccount();
      const send = (fields: string) => agent.post('/account/password').type('form').send(`csrf=${csrf}&${fields}`);
      const current = `current_password=${encodeURIComponent(person.password)}`;
      const missing = await send('new_password=x&confirm_password=y');
      expect(accountError(missing)).toEqual({ status: 400, error: 'Your current password is wrong.' });
      expect(missing.headers.ratelimit).toEqual(expect.any(String));
      const repeated = await send(`${current}&${current}&new_password=12345678&confirm_password=12345678`);
      expect(accountError(repeated)).toEqual({ status: 400, error: 'Your current password is wrong.' });
      const length = { status: 400, error: 'The new password must be 8 to 1024 characters.' };
      for (const next of [
        '',
        'new_password=1234567',
        'new_password=12345678&new_password=12345678',
        `new_password=${'x'.repeat(1025)}`,
      ])
        expect(accountError(await send(`${current}&${next}&confirm_password=1234567`))).toEqual(length);
      for (const confirm of ['', 'confirm_password=12345679', 'confirm_password=12345678&confirm_password=12345678'])
        expect(accountError(await send(`${current}&new_password=12345678&${confirm}`))).toEqual({
          status: 400,
          error: 'The two new passwords differ.',
        });
      const eightAndMore = `${'é'.repeat(4)}1234`;
      const changed = await send(
        `${current}&new_password=${encodeURIComponent(eightAndMore)}&confirm_password=${encodeURIComponent(eightAndMore)}`,
      );
      expect([changed.status, changed.headers.location]).toEqual([303, '/account?notice=password-changed']);
      const stored = await h.ctx.kernel.users.findByUsername(person.username);
      const { verifyPassword } = await import('../src/kernel/crypto');
      expect(await verifyPassword(eightAndMore, stored!.passwordHash!)).toBe(true);
    });
  });

  describe('the sign-in and sign-up pages', () => {
    /** A browser on the sign-in page of an authorization request: its agent, interaction and CSRF token. */
    async function onSignIn() {
      const agent = request.agent(h.publicApp);
      const start = await agent
        .get('/authorize')
        .query({ response_type: 'code', scope: 'openid', client_id: app.app_id, redirect_uri: REDIRECT_URI });
      const page = await agent.get(start.headers.location as string);
      expect(page.text).toContain('name="password"');
      return { agent, interaction: hidden(page.text, 'interaction'), csrf: hidden(page.text, 'csrf') };
    }
    const pageError = (res: request.Response, id: string) => ({
      status: res.status,
      error: new RegExp(`id="${id}">([^<]*)<`).exec(res.text)?.[1],
      username: /id="username"[^>]*value="([^"]*)"/.exec(res.text)?.[1],
    });
    const expired = { status: 400, code: 'invalid_request', attribute: 'interaction' };

    it.each(['/signin', '/signup'])(
      'GET %s: a missing, empty, repeated or unknown interaction is an expired one',
      async (path) => {
        const { agent, interaction } = await onSignIn();
        for (const query of [
          '',
          '?interaction=',
          `?interaction=${interaction}&interaction=${interaction}`,
          '?interaction=x',
          '?next=other',
        ])
          expect(shown(await agent.get(`${path}${query}`))).toMatchObject(expired);
        expect((await agent.get(`${path}?interaction=${interaction}&unknown=1&unknown=2`)).status).toBe(200);
      },
    );

    it.each(['/signin', '/signup'])('POST %s: the interaction first, then the CSRF token', async (path) => {
      const { agent, interaction, csrf } = await onSignIn();
      const send = (form: string) => agent.post(path).type('form').send(form);
      for (const form of [
        `csrf=${csrf}`,
        `interaction=${interaction}&interaction=${interaction}&csrf=x`,
        'next=account&interaction=&csrf=x',
      ])
        expect(shown(await send(form))).toMatchObject(expired);
      for (const form of [
        `interaction=${interaction}`,
        `interaction=${interaction}&csrf=${csrf}&csrf=${csrf}`,
        `interaction=${interaction}&csrf=`,
      ])
        expect(shown(await send(form))).toMatchObject({ status: 403, code: 'invalid_csrf', attribute: 'csrf' });
      for (const form of ['next=account', 'next=account&csrf=x'])
        expect(shown(await send(form))).toMatchObject({ status: 403, code: 'invalid_csrf', attribute: 'csrf' });
    });

    it('POST /signin: a missing, blank or repeated username or password asks for both; unknown fields are ignored', async () => {
      const { agent, interaction, csrf } = await onSignIn();
      const base = `interaction=${interaction}&csrf=${csrf}&unknown=1&unknown=2`;
      for (const [fields, username] of [
        ['password=x', ''],
        ['username=%20%20&password=x', ''],
        ['username=a&username=b&password=x', ''],
        ['username=%20ada%20&password=', 'ada'],
        ['username=ada&password=a&password=b', 'ada'],
      ])
        expect(pageError(await agent.post('/signin').type('form').send(`${base}&${fields}`), 'signin-error')).toEqual({
          status: 400,
          error: 'Enter your username and password.',
          username,
        });
      const ok = await agent
        .post('/signin')
        .type('form')
        .send(`${base}&username=%20${user.username}%20&password=${encodeURIComponent(user.password)}&method=password`);
      expect(ok.status).toBe(303);
    });

    it('POST /signup: the username, trimmed, is 3 to 64 of letters, digits and . _ - @ +; the page shows it back', async () => {
      const { agent, interaction, csrf } = await onSignIn();
      const base = `interaction=${interaction}&csrf=${csrf}&unknown=1&unknown=2`;
      const error = 'Choose a username of 3 to 64 letters, digits or . _ - @ +';
      for (const [fields, username] of [
        ['', ''],
        ['username=', ''],
        ['username=%20ab%20', 'ab'],
        ['username=a%20b', 'a b'],
        ['username=abc&username=abd', ''],
        [`username=${'a'.repeat(65)}`, 'a'.repeat(65)],
      ])
        expect(pageError(await agent.post('/signup').type('form').send(`${base}&${fields}`), 'signup-error')).toEqual({
          status: 400,
          error,
          username,
        });
      const ok = await agent
        .post('/signup')
        .type('form')
        .send(`${base}&username=%20new.comer%2Bx%40y%20&name=A&name=B`);
      expect(ok.status).toBe(200);
      expect(ok.text).toContain('name="ceremony"');
      const options = JSON.parse(/data-options="([^"]+)"/.exec(ok.text)![1].replace(/&quot;/g, '"')) as {
        user: { name: string; displayName: string };
      };
      expect(options.user.name).toBe('new.comer+x@y');
      expect(options.user.displayName).toBe('new.comer+x@y');
    });
  });

  describe('GET /authorize', () => {
    const challenge = 'a'.repeat(43);
    const authorize = (extra: string, base = 'response_type=code&scope=openid&state=s1') =>
      request(h.publicApp).get(
        `/authorize?client_id=${app.app_id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&${base}${extra}`,
      );

    it.each([
      ['an empty response_type', '', 'response_type=&scope=openid&state=s1', 'response_type is required.'],
      ['an empty response_mode', '&response_mode=', undefined, "response_mode '' is not supported."],
      [
        'an unknown response_mode',
        '&response_mode=web_message',
        undefined,
        "response_mode 'web_message' is not supported.",
      ],
      ['an empty scope', '', 'response_type=code&scope=&state=s1', 'scope is required.'],
      ['an empty max_age', '&max_age=', undefined, 'max_age must be a non-negative integer.'],
      ['a ten-digit max_age', '&max_age=1234567890', undefined, 'max_age must be a non-negative integer.'],
      ['a negative max_age', '&max_age=-1', undefined, 'max_age must be a non-negative integer.'],
      [
        'plain PKCE',
        `&code_challenge=${challenge}&code_challenge_method=plain`,
        undefined,
        'code_challenge_method must be S256 (plain is not supported).',
      ],
      [
        'a challenge without its method',
        `&code_challenge=${challenge}`,
        undefined,
        'code_challenge_method must be S256 (plain is not supported).',
      ],
      [
        'an empty challenge method',
        `&code_challenge=${challenge}&code_challenge_method=`,
        undefined,
        'code_challenge_method must be S256 (plain is not supported).',
      ],
      [
        'an empty challenge',
        '&code_challenge=&code_challenge_method=S256',
        undefined,
        'code_challenge must be a base64url SHA-256 value (43 characters).',
      ],
      [
        'a short challenge',
        `&code_challenge=${challenge.slice(1)}&code_challenge_method=S256`,
        undefined,
        'code_challenge must be a base64url SHA-256 value (43 characters).',
      ],
      ['a repeated unknown parameter', '&foo=1&foo=2', undefined, 'The foo parameter must be given once.'],
    ])('%s: back to the app with invalid_request', async (_what, extra, base, description) => {
      const res = await authorize(extra, base);
      expect(res.status).toBe(302);
      const url = new URL(res.headers.location as string);
      expect(`${url.origin}${url.pathname}`).toBe(REDIRECT_URI);
      expect(Object.fromEntries(url.searchParams)).toEqual({
        error: 'invalid_request',
        error_description: description,
        iss: BASE_URL,
        state: 's1',
      });
    });

    it('an empty or repeated client_id or redirect_uri: the error page, never a redirect', async () => {
      const uri = encodeURIComponent(REDIRECT_URI);
      for (const [query, code, attribute] of [
        [`client_id=&redirect_uri=${uri}`, 'required', 'client_id'],
        [`client_id=${app.app_id}&redirect_uri=`, 'required', 'redirect_uri'],
        [`client_id=${app.app_id}&client_id=${app.app_id}&redirect_uri=${uri}`, 'invalid_request', 'client_id'],
        [`client_id=${app.app_id}&redirect_uri=${uri}&redirect_uri=${uri}`, 'invalid_request', 'redirect_uri'],
        [`client_id=app_x&redirect_uri=${uri}`, 'invalid_client', 'client_id'],
      ]) {
        const res = await request(h.publicApp).get(`/authorize?response_type=code&scope=openid&${query}`);
        expect(shown(res)).toMatchObject({ status: 400, code, attribute });
      }
    });

    it('a known parameter and unknown ones given once are accepted', async () => {
      const res = await authorize(`&code_challenge=${challenge}&code_challenge_method=S256&max_age=0&foo=1&bar=x`);
      expect(res.status).toBe(302);
      expect(res.headers.location).toMatch(/^\/signin\?interaction=/);
    });
  });
});
