import request from 'supertest';
import {
  BASE_URL,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

describe('GET /authorize', () => {
  let h: IdentityHarness;
  let app: { app_id: string; client_secret: string };
  let user: { username: string; password: string };
  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h);
    user = await createUser(h);
  });
  afterAll(() => h.close());

  const base = () => ({
    response_type: 'code',
    scope: 'openid',
    client_id: app.app_id,
    redirect_uri: REDIRECT_URI,
    state: 'st-1',
  });

  describe('errors shown on a page, never redirected', () => {
    it.each([
      ['client_id', 'required', 'client_id'],
      ['redirect_uri', 'required', 'redirect_uri'],
    ])('missing %s → 400 %s', async (missing, code, attribute) => {
      const query: Record<string, string> = base();
      delete query[missing];
      const res = await request(h.publicApp).get('/authorize').query(query);
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.text).toContain(`<code id="error-code">${code}</code>`);
      expect(res.text).toContain(`<code id="error-attribute">${attribute}</code>`);
    });

    it('unknown client → invalid_client; JSON when asked', async () => {
      const res = await request(h.publicApp)
        .get('/authorize')
        .set('Accept', 'application/json')
        .query({ ...base(), client_id: `app_${'0'.repeat(32)}` });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: 'invalid_client',
        detail: 'Unknown or disabled client_id.',
        attribute: 'client_id',
      });
    });

    it.each([
      'http://localhost:3000/other',
      'http://localhost:3000/callback/',
      'http://localhost:3001/callback',
      'http://LOCALHOST:3000/callback',
    ])('unregistered redirect URI %s → invalid_redirect_uri (exact match)', async (uri) => {
      const res = await request(h.publicApp)
        .get('/authorize')
        .set('Accept', 'application/json')
        .query({ ...base(), redirect_uri: uri });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: 'invalid_redirect_uri',
        detail: 'Invalid redirect_uri provided.',
        attribute: 'redirect_uri',
      });
    });

    it('pages cannot be framed', async () => {
      const res = await request(h.publicApp).get('/authorize').query({});
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    });
  });

  describe('errors sent back to the redirect URI with state', () => {
    const cases: [string, Record<string, string | undefined>, string, RegExp, 'query' | 'fragment'][] = [
      ['missing response_type', { response_type: undefined }, 'invalid_request', /response_type/, 'query'],
      ['missing scope', { scope: undefined }, 'invalid_request', /scope/, 'query'],
      ['scope without openid', { scope: 'email' }, 'invalid_scope', /openid/, 'query'],
      ['unsupported response_type', { response_type: 'token' }, 'unsupported_response_type', /token/, 'fragment'],
      ['unknown response_mode', { response_mode: 'web_message' }, 'invalid_request', /response_mode/, 'query'],
      [
        'query mode for implicit',
        { response_type: 'id_token', nonce: 'n', response_mode: 'query' },
        'invalid_request',
        /query/,
        'fragment',
      ],
      ['missing nonce for implicit', { response_type: 'id_token' }, 'invalid_request', /nonce/, 'fragment'],
      ['missing nonce for hybrid', { response_type: 'code id_token' }, 'invalid_request', /nonce/, 'fragment'],
      [
        'plain PKCE',
        { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' },
        'invalid_request',
        /S256/,
        'query',
      ],
      ['PKCE without method', { code_challenge: 'a'.repeat(43) }, 'invalid_request', /S256/, 'query'],
      ['bad prompt', { prompt: 'none login' }, 'invalid_request', /prompt/, 'query'],
      ['prompt=none without session', { prompt: 'none' }, 'login_required', /prompt=none/, 'query'],
    ];
    it.each(cases)('%s', async (_name, change, error, description, where) => {
      const query: Record<string, string> = { ...base() };
      for (const [k, v] of Object.entries(change)) {
        if (v === undefined) delete query[k];
        else query[k] = v;
      }
      const res = await request(h.publicApp).get('/authorize').query(query);
      expect(res.status).toBe(302);
      const location = new URL(res.headers.location);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
      const params = new URLSearchParams(where === 'query' ? location.search : location.hash.slice(1));
      expect(where === 'query' ? location.hash : location.search).toBe('');
      expect(params.get('error')).toBe(error);
      expect(params.get('error_description')).toMatch(description);
      expect(params.get('state')).toBe('st-1');
    });

    it('the user denying consent → access_denied', async () => {
      const agent = request.agent(h.publicApp);
      const res = await browserFlow(agent, base(), user, 'deny');
      expect(res.status).toBe(303);
      expect(callbackParams(res)).toEqual({
        error: 'access_denied',
        error_description: 'The user denied the request.',
        iss: BASE_URL,
        state: 'st-1',
      });
    });
  });

  describe('sign-in and consent', () => {
    it('asks to sign in, then for consent naming the app and scopes, then returns a code in the query', async () => {
      const agent = request.agent(h.publicApp);
      const start = await agent.get('/authorize').query({ ...base(), scope: 'openid email profile' });
      expect(start.status).toBe(302);
      expect(start.headers.location).toMatch(/^\/signin\?interaction=[0-9a-f]{64}$/);
      const signin = await agent.get(start.headers.location);
      expect(signin.status).toBe(200);
      expect(signin.text).toContain('name="username"');
      expect(signin.text).toContain('name="password"');
      expect(signin.text).toContain('Test app');
      expect(signin.headers['cache-control']).toBe('no-store');
      // the POST's redirect back to the app must be allowed (browsers apply form-action to it)
      expect(signin.headers['content-security-policy']).toContain("form-action 'self' http://localhost:3000;");
      // set by /authorize: the interaction is bound to this browser (issue 23, item 9)
      const csrfCookie = (start.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('attest_csrf='));
      expect(csrfCookie).toMatch(/HttpOnly/);
      expect(csrfCookie).toMatch(/SameSite=Lax/);

      const res = await browserFlow(agent, { ...base(), scope: 'openid email profile' }, user);
      expect(res.status).toBe(303);
      const params = callbackParams(res);
      expect(Object.keys(params).sort()).toEqual(['code', 'iss', 'state']);
      expect(params.code).toMatch(/^[0-9a-f]{64}$/);
    });

    it('shows the consent page with the scopes and a decision button, and remembers consent', async () => {
      const agent = request.agent(h.publicApp);
      const other = await createUser(h);
      let res = await agent.get('/authorize').query({ ...base(), scope: 'openid email' });
      res = await agent.get(res.headers.location);
      const { hidden } = await import('./support');
      res = await agent
        .post('/signin')
        .type('form')
        .send({
          interaction: hidden(res.text, 'interaction'),
          csrf: hidden(res.text, 'csrf'),
          username: other.username,
          password: other.password,
        });
      expect(res.status).toBe(303);
      expect(res.headers.location).toMatch(/^\/consent\?interaction=/);
      const sessionCookie = (res.headers['set-cookie'] as unknown as string[]).find((c) =>
        c.startsWith('attest_session='),
      );
      expect(sessionCookie).toMatch(/HttpOnly/);
      expect(sessionCookie).toMatch(/SameSite=Lax/);
      expect(sessionCookie).not.toMatch(/Secure/);
      const consent = await agent.get(res.headers.location);
      expect(consent.text).toContain('Test app');
      expect(consent.text).toContain('data-scope="openid"');
      expect(consent.text).toContain('data-scope="email"');
      expect(consent.text).toContain('name="decision" value="approve"');
      expect(consent.text).toContain('name="decision" value="deny"');
      res = await agent
        .post('/consent')
        .type('form')
        .send({
          interaction: hidden(consent.text, 'interaction'),
          csrf: hidden(consent.text, 'csrf'),
          decision: 'approve',
        });
      expect(callbackParams(res).code).toBeDefined();

      // same scopes again: straight back to the app, no pages
      const again = await agent.get('/authorize').query({ ...base(), scope: 'openid email' });
      expect(again.status).toBe(302);
      expect(callbackParams(again).code).toMatch(/^[0-9a-f]{64}$/);
      // a new scope: consent is asked again
      const more = await agent.get('/authorize').query({ ...base(), scope: 'openid email profile' });
      expect(more.headers.location).toMatch(/^\/consent\?/);
      // prompt=none with a session and consent: silent success
      const silent = await agent.get('/authorize').query({ ...base(), scope: 'openid', prompt: 'none' });
      expect(callbackParams(silent).code).toBeDefined();
      // prompt=none when consent is missing → consent_required
      const needConsent = await agent.get('/authorize').query({ ...base(), scope: 'openid profile', prompt: 'none' });
      expect(callbackParams(needConsent).error).toBe('consent_required');
      // prompt=login forces the sign-in page; prompt=consent forces the consent page
      expect((await agent.get('/authorize').query({ ...base(), prompt: 'login' })).headers.location).toMatch(
        /^\/signin\?/,
      );
      expect((await agent.get('/authorize').query({ ...base(), prompt: 'consent' })).headers.location).toMatch(
        /^\/consent\?/,
      );
      // max_age=0 forces a fresh sign-in
      expect((await agent.get('/authorize').query({ ...base(), max_age: '0' })).headers.location).toMatch(
        /^\/signin\?/,
      );
    });

    it('refuses a wrong password, and a sign-in form without a valid CSRF token', async () => {
      const agent = request.agent(h.publicApp);
      let res = await agent.get('/authorize').query(base());
      res = await agent.get(res.headers.location);
      const { hidden } = await import('./support');
      const interaction = hidden(res.text, 'interaction');
      const bad = await agent
        .post('/signin')
        .type('form')
        .send({ interaction, csrf: hidden(res.text, 'csrf'), username: user.username, password: 'wrong password' });
      expect(bad.status).toBe(400);
      expect(bad.text).toContain('Unknown username or wrong password.');
      expect(bad.headers['set-cookie']?.toString() ?? '').not.toContain('attest_session');
      const forged = await agent
        .post('/signin')
        .type('form')
        .send({ interaction, csrf: 'f'.repeat(64), username: user.username, password: user.password });
      expect(forged.status).toBe(403);
      expect(forged.text).toContain('invalid_csrf');
      // another browser (without this one's cookie) does not even find the sign-in in progress
      const elsewhere = await request(h.publicApp)
        .post('/signin')
        .type('form')
        .send({ interaction, csrf: hidden(res.text, 'csrf'), username: user.username, password: user.password });
      expect(elsewhere.status).toBe(400);
      expect(elsewhere.text).toContain('This sign-in request has expired or is unknown.');
    });

    it('returns implicit-flow tokens in the fragment, and hybrid values by form_post', async () => {
      const agent = request.agent(h.publicApp);
      const implicit = await browserFlow(agent, { ...base(), response_type: 'id_token token', nonce: 'n-1' }, user);
      const params = callbackParams(implicit);
      expect(new URL(implicit.headers.location).search).toBe('');
      expect(Object.keys(params).sort()).toEqual([
        'access_token',
        'expires_in',
        'id_token',
        'iss',
        'state',
        'token_type',
      ]);
      expect(params.token_type).toBe('Bearer');
      expect(params.expires_in).toBe('3600');

      const hybrid = await browserFlow(
        agent,
        {
          ...base(),
          response_type: 'code id_token',
          nonce: 'n-2',
          response_mode: 'form_post',
          state: '"><script>x</script>',
        },
        user,
      );
      expect(hybrid.status).toBe(200);
      expect(hybrid.text).toContain(`<form method="post" action="${REDIRECT_URI}">`);
      expect(hybrid.text).not.toContain('<script>x</script>');
      expect(hybrid.headers['content-security-policy']).toContain('form-action http://localhost:3000');
      const posted = callbackParams(hybrid);
      expect(Object.keys(posted).sort()).toEqual(['code', 'id_token', 'iss', 'state']);
      expect(posted.state).toBe('"><script>x</script>');
    });

    it('accepts the authorization request as a POST form too', async () => {
      const agent = request.agent(h.publicApp);
      await browserFlow(agent, base(), user);
      const res = await agent.post('/authorize').type('form').send(base());
      expect(res.status).toBe(302);
      expect(callbackParams(res).code).toBeDefined();
    });
  });
});
