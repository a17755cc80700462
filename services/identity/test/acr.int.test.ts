import jwt from 'jsonwebtoken';
import request from 'supertest';
import {
  ADMIN_TOKEN,
  basic,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

const ORB = 'urn:attest:loa:orb';
const DEVICE = 'urn:attest:loa:device';
const ESSENTIAL_ORB = JSON.stringify({ id_token: { acr: { essential: true, values: [ORB] } } });

describe('the verification level as acr (issue 24)', () => {
  let h: IdentityHarness;
  let app: { app_id: string; client_secret: string };
  let orbUser: { username: string; password: string; user_id: string };
  let deviceUser: { username: string; password: string; user_id: string };

  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h);
    orbUser = await createUser(h, { verification_level: 'orb' });
    deviceUser = await createUser(h, { verification_level: 'device' });
  });
  afterAll(() => h.close());

  const authorizeQuery = (extra: Record<string, string> = {}, a = app) => ({
    response_type: 'code',
    scope: 'openid',
    client_id: a.app_id,
    redirect_uri: REDIRECT_URI,
    state: 'st-1',
    ...extra,
  });

  async function exchange(code: string, a = app) {
    const res = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(a.app_id, a.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(res.status).toBe(200);
    return res.body as { access_token: string; id_token: string; scope: string };
  }

  /** The refusal page's link back to the app, as the app receives it. */
  const backLink = (html: string) =>
    new URL(/id="back-to-app" href="([^"]+)"/.exec(html)![1].replace(/&amp;/g, '&').replace(/&#39;/g, "'"));

  it('discovery advertises acr values, the claims parameter, and acr/amr/auth_time', async () => {
    const res = await request(h.publicApp).get('/.well-known/openid-configuration');
    expect(res.body.acr_values_supported).toEqual([ORB, DEVICE]);
    expect(res.body.claims_parameter_supported).toBe(true);
    expect(res.body.claims_supported).toEqual(expect.arrayContaining(['acr', 'amr', 'auth_time']));
  });

  it('every id_token states acr, amr and auth_time; the access token and /introspect carry them', async () => {
    const res = await browserFlow(request.agent(h.publicApp), authorizeQuery(), deviceUser);
    const tokens = await exchange(callbackParams(res).code);
    const idToken = jwt.decode(tokens.id_token) as Record<string, unknown>;
    expect(idToken.acr).toBe(DEVICE);
    expect(idToken.amr).toEqual(['pwd']);
    expect(typeof idToken.auth_time).toBe('number');
    const info = await request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ token: tokens.access_token });
    expect(info.body).toMatchObject({ active: true, acr: DEVICE, amr: ['pwd'], auth_time: idToken.auth_time });
    // not asked for: /userinfo stays as it was
    const userinfo = await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${tokens.access_token}`);
    expect(userinfo.body.acr).toBeUndefined();
  });

  it('acr_values is voluntary: a device-level person signs in, acr states the level they have', async () => {
    const res = await browserFlow(request.agent(h.publicApp), authorizeQuery({ acr_values: ORB }), deviceUser);
    const params = callbackParams(res);
    expect(params.error).toBeUndefined();
    const tokens = await exchange(params.code);
    expect((jwt.decode(tokens.id_token) as { acr: string }).acr).toBe(DEVICE);
  });

  it('an essential acr met: the orb-verified person gets acr orb', async () => {
    const res = await browserFlow(request.agent(h.publicApp), authorizeQuery({ claims: ESSENTIAL_ORB }), orbUser);
    const tokens = await exchange(callbackParams(res).code);
    expect((jwt.decode(tokens.id_token) as { acr: string }).acr).toBe(ORB);
  });

  it('orb satisfies an essential device', async () => {
    const claims = JSON.stringify({ id_token: { acr: { essential: true, value: DEVICE } } });
    const res = await browserFlow(request.agent(h.publicApp), authorizeQuery({ claims }), orbUser);
    const tokens = await exchange(callbackParams(res).code);
    expect((jwt.decode(tokens.id_token) as { acr: string }).acr).toBe(ORB);
  });

  it('an essential acr unmet: a page says why, its link gives the app unmet_authentication_requirements', async () => {
    const agent = request.agent(h.publicApp);
    const res = await browserFlow(agent, authorizeQuery({ claims: ESSENTIAL_ORB }), deviceUser);
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.text).toContain('id="wanted-level">orb<');
    expect(res.text).toContain('id="account-level">device<');
    const back = backLink(res.text);
    expect(back.origin + back.pathname).toBe(REDIRECT_URI);
    expect(back.searchParams.get('error')).toBe('unmet_authentication_requirements');
    expect(back.searchParams.get('state')).toBe('st-1');
    expect(back.searchParams.get('code')).toBeNull();

    // signed in now: the next request is refused at /authorize the same way, and prompt=none gets the error
    const again = await agent.get('/authorize').query(authorizeQuery({ claims: ESSENTIAL_ORB }));
    expect(again.status).toBe(403);
    expect(backLink(again.text).searchParams.get('error')).toBe('unmet_authentication_requirements');
    const silent = await agent.get('/authorize').query(authorizeQuery({ claims: ESSENTIAL_ORB, prompt: 'none' }));
    expect(silent.status).toBe(302);
    expect(callbackParams(silent)).toMatchObject({ error: 'unmet_authentication_requirements', state: 'st-1' });
    // without the demand, the same session signs in
    const plain = await browserFlow(agent, authorizeQuery(), deviceUser);
    expect(callbackParams(plain).code).toMatch(/^[0-9a-f]{64}$/);
  });

  it('prompt=login and max_age keep working with an essential acr', async () => {
    const agent = request.agent(h.publicApp);
    const first = await browserFlow(agent, authorizeQuery({ claims: ESSENTIAL_ORB }), orbUser);
    expect(callbackParams(first).code).toBeDefined();
    const login = await agent.get('/authorize').query(authorizeQuery({ claims: ESSENTIAL_ORB, prompt: 'login' }));
    expect(login.status).toBe(302);
    expect(login.headers.location).toMatch(/^\/signin\?interaction=/);
    const maxAge = await agent.get('/authorize').query(authorizeQuery({ claims: ESSENTIAL_ORB, max_age: '0' }));
    expect(maxAge.headers.location).toMatch(/^\/signin\?interaction=/);
    const signedIn = await browserFlow(agent, authorizeQuery({ claims: ESSENTIAL_ORB, max_age: '0' }), orbUser);
    const tokens = await exchange(callbackParams(signedIn).code);
    expect((jwt.decode(tokens.id_token) as { acr: string }).acr).toBe(ORB);
  });

  it('the claims parameter asks /userinfo for acr, amr, auth_time and a person claim (its scope is consented)', async () => {
    const claims = JSON.stringify({ userinfo: { acr: null, amr: { essential: true }, auth_time: null, email: null } });
    const res = await browserFlow(request.agent(h.publicApp), authorizeQuery({ claims }), orbUser);
    const tokens = await exchange(callbackParams(res).code);
    expect(tokens.scope).toBe('openid email');
    const userinfo = await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${tokens.access_token}`);
    expect(userinfo.status).toBe(200);
    expect(userinfo.body).toMatchObject({ acr: ORB, amr: ['pwd'], email: expect.stringContaining('@') });
    expect(typeof userinfo.body.auth_time).toBe('number');
  });

  it('an id_token sub value in claims: only that person is answered for', async () => {
    const agent = request.agent(h.publicApp);
    const first = await browserFlow(agent, authorizeQuery(), orbUser);
    const sub = (jwt.decode((await exchange(callbackParams(first).code)).id_token) as { sub: string }).sub;
    const named = (value: string) => JSON.stringify({ id_token: { sub: { value } } });
    const same = await agent.get('/authorize').query(authorizeQuery({ claims: named(sub), prompt: 'none' }));
    expect(callbackParams(same).code).toMatch(/^[0-9a-f]{64}$/);
    const other = `0x${'0'.repeat(64)}`;
    const silent = await agent.get('/authorize').query(authorizeQuery({ claims: named(other), prompt: 'none' }));
    expect(callbackParams(silent)).toMatchObject({ error: 'login_required', state: 'st-1' });
    const asked = await agent.get('/authorize').query(authorizeQuery({ claims: named(other) }));
    expect(asked.headers.location).toMatch(/^\/signin\?interaction=/);
    // signing in again as the same person does not make them the one named
    const refused = await browserFlow(agent, authorizeQuery({ claims: named(other) }), orbUser);
    expect(callbackParams(refused)).toMatchObject({ error: 'login_required' });
    expect(callbackParams(refused).code).toBeUndefined();
  });

  it.each([
    ['not JSON', '{', 'claims must be a JSON object.'],
    ['an array', '[]', 'claims must be a JSON object.'],
    ['id_token not an object', '{"id_token":1}', 'claims.id_token must be a JSON object.'],
    ['a member not an object', '{"userinfo":{"acr":true}}', 'claims.userinfo.acr must be null or an object.'],
    [
      'essential not boolean',
      '{"id_token":{"acr":{"essential":"yes"}}}',
      'claims.id_token.acr.essential must be true or false.',
    ],
    ['values not an array', '{"id_token":{"acr":{"values":"x"}}}', 'claims.id_token.acr.values must be an array.'],
    ['too long', JSON.stringify({ id_token: { x: 'a'.repeat(4100) } }), 'claims must be at most 4096 characters.'],
  ])('claims %s: invalid_request naming the parameter, at the redirect URI', async (_what, claims, description) => {
    const res = await request(h.publicApp).get('/authorize').query(authorizeQuery({ claims }));
    expect(res.status).toBe(302);
    expect(callbackParams(res)).toMatchObject({
      error: 'invalid_request',
      error_description: description,
      state: 'st-1',
    });
  });

  /**
   * What the OpenID conformance suite checks of acr and the claims parameter in the plain flows, with no
   * warning: every id_token (from /token and from /authorize) has an acr among acr_values_supported (the
   * one asked for when the person has it), auth_time when max_age was asked, and /userinfo answers the
   * members the claims parameter asked it for (essential or not), name included with scope openid alone.
   */
  it.each([
    ['code', 'query'],
    ['id_token', 'fragment'],
    ['code id_token', 'form_post'],
  ])(
    'conformance-style, response_type %s (%s): acr, auth_time with max_age, claims for userinfo',
    async (type, mode) => {
      const supported = (await request(h.publicApp).get('/.well-known/openid-configuration')).body
        .acr_values_supported as string[];
      const claims = JSON.stringify({
        id_token: { acr: { essential: true, values: [ORB] }, auth_time: { essential: true } },
        userinfo: { name: { essential: true }, acr: null },
      });
      const before = Math.floor(Date.now() / 1000) - 1;
      const res = await browserFlow(
        request.agent(h.publicApp),
        authorizeQuery({
          response_type: type,
          response_mode: mode,
          nonce: 'n-conf',
          acr_values: `${ORB} ${DEVICE}`,
          max_age: '300',
          claims,
        }),
        orbUser,
      );
      const params = callbackParams(res);
      expect(params.error).toBeUndefined();
      const tokens = params.code ? await exchange(params.code) : undefined;
      const idTokens = [params.id_token, tokens?.id_token].filter((t): t is string => t !== undefined);
      expect(idTokens).toHaveLength(type === 'code id_token' ? 2 : 1);
      for (const idToken of idTokens) {
        const decoded = jwt.decode(idToken) as Record<string, unknown>;
        expect(supported).toContain(decoded.acr);
        expect(decoded.acr).toBe(ORB);
        expect(decoded.amr).toEqual(['pwd']);
        expect(decoded.auth_time).toEqual(expect.any(Number));
        expect(decoded.auth_time as number).toBeGreaterThanOrEqual(before);
        expect(decoded.nonce).toBe('n-conf');
      }
      if (!tokens) return; // the implicit id_token flow has no access token for /userinfo
      const userinfo = await request(h.publicApp)
        .get('/userinfo')
        .set('Authorization', `Bearer ${tokens.access_token}`);
      expect(userinfo.status).toBe(200);
      expect(userinfo.body).toMatchObject({ name: 'Ada Lovelace', acr: ORB });
    },
  );

  it('acr_values over its limit is invalid_request', async () => {
    const res = await request(h.publicApp)
      .get('/authorize')
      .query(authorizeQuery({ acr_values: 'x'.repeat(513) }));
    expect(callbackParams(res)).toMatchObject({
      error: 'invalid_request',
      error_description: 'acr_values must be at most 512 characters.',
    });
  });

  it('the claims request survives the interaction with form_post (the page posts the error)', async () => {
    const res = await browserFlow(
      request.agent(h.publicApp),
      authorizeQuery({ claims: ESSENTIAL_ORB, response_mode: 'form_post' }),
      deviceUser,
    );
    expect(res.status).toBe(403);
    expect(res.text).toContain(`<form method="post" action="${REDIRECT_URI}">`);
    expect(res.text).toContain('name="error" value="unmet_authentication_requirements"');
    expect(res.headers['content-security-policy']).toContain('form-action');
  });

  describe('a per-app minimum verification level', () => {
    let strict: { app_id: string; client_secret: string };
    const admin = () => ({ Authorization: `Bearer ${ADMIN_TOKEN}` });

    beforeAll(async () => {
      const res = await request(h.adminApp)
        .post('/admin/apps')
        .set(admin())
        .send({ name: 'Strict app', redirect_uris: [REDIRECT_URI], min_verification_level: 'orb' });
      expect(res.status).toBe(201);
      expect(res.body.min_verification_level).toBe('orb');
      strict = res.body;
    });

    it('refuses a device-level person on every request (page, then the error), lets orb through', async () => {
      const refused = await browserFlow(request.agent(h.publicApp), authorizeQuery({}, strict), deviceUser);
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('Strict app');
      expect(backLink(refused.text).searchParams.get('error')).toBe('unmet_authentication_requirements');
      // a voluntary acr_values for device does not lower the app's minimum
      const voluntary = await browserFlow(
        request.agent(h.publicApp),
        authorizeQuery({ acr_values: DEVICE }, strict),
        deviceUser,
      );
      expect(voluntary.status).toBe(403);
      const ok = await browserFlow(request.agent(h.publicApp), authorizeQuery({}, strict), orbUser);
      const tokens = await exchange(callbackParams(ok).code, strict);
      expect((jwt.decode(tokens.id_token) as { acr: string }).acr).toBe(ORB);
    });

    it('is changed and cleared through the admin API, audited', async () => {
      const lowered = await request(h.adminApp)
        .patch(`/admin/apps/${strict.app_id}`)
        .set(admin())
        .send({ min_verification_level: 'none' });
      expect(lowered.status).toBe(200);
      expect(lowered.body.min_verification_level).toBeNull();
      const ok = await browserFlow(request.agent(h.publicApp), authorizeQuery({}, strict), deviceUser);
      expect(callbackParams(ok).code).toBeDefined();
      const raised = await request(h.adminApp)
        .patch(`/admin/apps/${strict.app_id}`)
        .set(admin())
        .send({ min_verification_level: 'orb' });
      expect(raised.body.min_verification_level).toBe('orb');
      const bad = await request(h.adminApp)
        .patch(`/admin/apps/${strict.app_id}`)
        .set(admin())
        .send({ min_verification_level: 'retina' });
      expect(bad.status).toBe(400);
      const audit = await request(h.adminApp).get('/admin/audit').set(admin()).query({ type: 'app.updated' });
      const details = (audit.body.events as { subject: string; detail: Record<string, unknown> }[])
        .filter((e) => e.subject === strict.app_id)
        .map((e) => e.detail.min_verification_level);
      expect(details).toEqual(expect.arrayContaining(['none', 'orb']));
    });
  });
});
