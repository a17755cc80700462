import { randomUUID } from 'node:crypto';
import request from 'supertest';
import {
  ADMIN_TOKEN,
  basic,
  BASE_URL,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

type Jose = typeof import('jose');
type Client = { app_id: string; client_secret: string };
type Resource = { resource_id: string; uri: string; introspection_secret: string };

const TOOLS = 'https://tools.example.com/mcp';
const VAULT = 'https://vault.example.com/api';

/**
 * RFC 8707 resource indicators (issue 41, item 2): a token for a registered resource is an RFC 9068 JWT whose
 * aud is that resource alone; unknown resources and scopes are refused; the resource's minimum level holds;
 * its server introspects with its own credentials and gets RFC 7662 §2.2 answers (issue 40, item 8).
 */
describe('tokens bound to a resource (RFC 8707, RFC 9068)', () => {
  let jose: Jose;
  let h: IdentityHarness;
  let app: Client;
  let tools: Resource;
  let vault: Resource;
  let orbUser: { username: string; password: string; user_id: string };
  let deviceUser: { username: string; password: string; user_id: string };

  const admin = (method: 'post' | 'get' | 'patch' | 'delete', path: string) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  beforeAll(async () => {
    jose = await import('jose');
    h = await identityHarness();
    app = await createApp(h);
    orbUser = await createUser(h);
    deviceUser = await createUser(h, { verification_level: 'device' });
    tools = (
      await admin('post', '/admin/resources')
        .send({ uri: TOOLS, name: 'Tools', scopes: ['tools:read', 'tools:write'] })
        .expect(201)
    ).body;
    vault = (
      await admin('post', '/admin/resources')
        .send({ uri: VAULT, name: 'Vault', scopes: ['vault:read'], min_verification_level: 'orb' })
        .expect(201)
    ).body;
  });
  afterAll(() => h.close());

  /** The authorization request; `resource: ''` leaves resource out. */
  const query = (extra: Record<string, string> = {}) => {
    const q: Record<string, string> = {
      response_type: 'code',
      scope: 'openid tools:read',
      client_id: app.app_id,
      redirect_uri: REDIRECT_URI,
      state: 'st-1',
      resource: TOOLS,
      ...extra,
    };
    if (q.resource === '') delete q.resource;
    return q;
  };
  const token = (form: Record<string, string>, client: Client = app) =>
    request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(client.app_id, client.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, ...form });
  async function code(extra: Record<string, string> = {}, user = orbUser, agent = request.agent(h.publicApp)) {
    return callbackParams(await browserFlow(agent, query(extra), user));
  }
  const introspectAs = (r: Resource, tokenValue: string, secret = r.introspection_secret) =>
    request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(r.resource_id, secret))
      .type('form')
      .send({ token: tokenValue });
  async function verified(accessToken: string, audience: string) {
    const jwks = (await request(h.publicApp).get('/jwks').expect(200)).body;
    return jose.jwtVerify(accessToken, jose.createLocalJWKSet(jwks), {
      issuer: BASE_URL,
      audience,
      typ: 'at+jwt',
    });
  }

  it('gives an RFC 9068 JWT whose aud is the resource, with the scopes asked of it, signed with the keys in /jwks', async () => {
    const params = await code();
    const res = await token({ code: params.code, resource: TOOLS }).expect(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'tools:read' });
    expect(res.body.id_token).toEqual(expect.any(String));
    const { payload, protectedHeader } = await verified(res.body.access_token, TOOLS);
    expect(protectedHeader.typ).toBe('at+jwt');
    expect(payload).toMatchObject({
      iss: BASE_URL,
      aud: TOOLS,
      client_id: app.app_id,
      scope: 'tools:read',
      acr: 'urn:attest:loa:orb',
    });
    for (const claim of ['sub', 'auth_time', 'exp', 'iat', 'jti']) expect(payload[claim]).toBeDefined();
    // the same pairwise subject the app's id_token carries
    expect(payload.sub).toBe(jose.decodeJwt(res.body.id_token).sub);
    // a token for the resource is not one for /userinfo
    await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${res.body.access_token}`).expect(401);
  });

  it('asks the person again for a resource, or a scope of it, they have not approved for the app', async () => {
    const person = await createUser(h);
    const agent = request.agent(h.publicApp);
    // signed in to the app (openid approved), no resource
    expect((await code({ scope: 'openid', resource: '' }, person, agent)).code).toEqual(expect.any(String));
    const consentFirst = async (extra: Record<string, string>) => {
      const res = await agent.get('/authorize').query(query(extra));
      expect(res.status).toBe(302);
      return res.headers.location as string;
    };
    // the resource's scope was never approved: the consent page, not a silent code (failed before: a code)
    expect(await consentFirst({ scope: 'openid tools:read' })).toMatch(/^\/consent\?interaction=/);
    const silent = await agent.get('/authorize').query(query({ scope: 'openid tools:read', prompt: 'none' }));
    expect(new URL(silent.headers.location as string).searchParams.get('error')).toBe('consent_required');
    // approved once: then silent for that scope, asked again for a wider one and for another resource
    expect((await code({ scope: 'openid tools:read' }, person, agent)).code).toEqual(expect.any(String));
    expect(await consentFirst({ scope: 'openid tools:read' })).toMatch(/^https?:/);
    expect(await consentFirst({ scope: 'openid tools:write' })).toMatch(/^\/consent\?interaction=/);
    expect(await consentFirst({ scope: 'openid vault:read', resource: VAULT })).toMatch(/^\/consent\?interaction=/);
    // what was approved is recorded resource by resource
    const shown = (await admin('get', `/admin/users/${person.user_id}`).expect(200)).body;
    const consent = (shown.consents as { app_id: string; scopes: string[] }[]).find((c) => c.app_id === app.app_id);
    expect(consent?.scopes).toEqual(expect.arrayContaining(['openid', TOOLS, `${TOOLS}#tools:read`]));
    expect(consent?.scopes).not.toContain(`${TOOLS}#tools:write`);
  });

  it('without resource at /token, the authorization request’s; another resource is invalid_target', async () => {
    const first = await code();
    const res = await token({ code: first.code }).expect(200);
    expect(jose.decodeJwt(res.body.access_token).aud).toBe(TOOLS);
    const second = await code();
    const refused = await token({ code: second.code, resource: VAULT }).expect(400);
    expect(refused.body).toMatchObject({ error: 'invalid_target' });
    expect(refused.body.error_description).toContain(TOOLS);
    // a grant made without a resource cannot become one for a resource
    const plain = await code({ resource: '', scope: 'openid' });
    const widened = await token({ code: plain.code, resource: TOOLS }).expect(400);
    expect(widened.body.error).toBe('invalid_target');
  });

  it('tokens without resource are as before: aud the issuer, the OpenID scopes, good at /userinfo', async () => {
    const params = await code({ resource: '', scope: 'openid profile tools:read' });
    const res = await token({ code: params.code }).expect(200);
    expect(res.body.scope).toBe('openid profile');
    const claims = jose.decodeJwt(res.body.access_token);
    expect(claims.aud).toBe(BASE_URL);
    await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${res.body.access_token}`).expect(200);
  });

  it('a request for a resource alone (no openid: OAuth 2.0, as MCP clients send it) gets its token and no id_token', async () => {
    const person = await createUser(h);
    const agent = request.agent(h.publicApp);
    const start = await agent.get('/authorize').query(query({ scope: 'tools:read' }));
    expect(start.status).toBe(302);
    // the person approves the resource's scope, and nothing of OpenID Connect
    expect(start.headers.location).toMatch(/^\/signin/);
    const params = await code({ scope: 'tools:read' }, person, agent);
    const res = await token({ code: params.code }).expect(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'tools:read' });
    expect(res.body).not.toHaveProperty('id_token');
    const { payload } = await verified(res.body.access_token, TOOLS);
    expect(payload).toMatchObject({
      aud: TOOLS,
      client_id: app.app_id,
      scope: 'tools:read',
      acr: 'urn:attest:loa:orb',
    });
    expect(payload.sub).toBe(await h.ctx.oauth.grants.subjectFor(app.app_id, person.user_id));
    const shown = (await admin('get', `/admin/users/${person.user_id}`).expect(200)).body;
    const consent = (shown.consents as { app_id: string; scopes: string[] }[]).find((c) => c.app_id === app.app_id);
    expect(consent?.scopes.sort()).toEqual([TOOLS, `${TOOLS}#tools:read`].sort());
    // the resource server sees it active
    expect((await introspectAs(tools, res.body.access_token).expect(200)).body).toMatchObject({
      active: true,
      scope: 'tools:read',
    });
    // without resource, openid is still required; and a response type with an id_token needs it too
    const noResource = await request(h.publicApp)
      .get('/authorize')
      .query(query({ scope: 'tools:read', resource: '' }));
    expect(callbackParams(noResource)).toMatchObject({ error: 'invalid_scope', state: 'st-1' });
    expect(callbackParams(noResource).error_description).toContain('openid');
    const hybrid = await request(h.publicApp)
      .get('/authorize')
      .query(query({ scope: 'tools:read', response_type: 'code id_token', nonce: 'n-1' }));
    expect(callbackParams(hybrid).error).toBe('invalid_scope');
    // what only an id_token or /userinfo gives is never asked without openid
    const email = await request(h.publicApp)
      .get('/authorize')
      .query(query({ scope: 'email tools:read' }));
    expect(callbackParams(email)).toMatchObject({ error: 'invalid_scope', state: 'st-1' });
    const claims = await request(h.publicApp)
      .get('/authorize')
      .query(query({ scope: 'tools:read', claims: JSON.stringify({ userinfo: { email: null } }) }));
    expect(callbackParams(claims)).toMatchObject({ error: 'invalid_request', state: 'st-1' });
  });

  it('refuses at /authorize an unknown resource (invalid_target), a scope it does not offer (invalid_scope), two resources', async () => {
    const unknown = await request(h.publicApp)
      .get('/authorize')
      .query(query({ resource: 'https://nowhere.example.com/' }));
    expect(unknown.status).toBe(302);
    expect(callbackParams(unknown)).toMatchObject({ error: 'invalid_target', state: 'st-1' });
    const scope = await request(h.publicApp)
      .get('/authorize')
      .query(query({ scope: 'openid tools:admin' }));
    expect(callbackParams(scope)).toMatchObject({ error: 'invalid_scope', state: 'st-1' });
    expect(callbackParams(scope).error_description).toContain('tools:admin');
    const two = await request(h.publicApp).get(
      `/authorize?${new URLSearchParams(query()).toString()}&resource=${encodeURIComponent(VAULT)}`,
    );
    expect(callbackParams(two)).toMatchObject({ error: 'invalid_target' });
  });

  it('checks resource at /par as /authorize would, and a pushed resource binds the token', async () => {
    const par = (form: Record<string, string>) =>
      request(h.publicApp)
        .post('/par')
        .set('Authorization', basic(app.app_id, app.client_secret))
        .type('form')
        .send({ ...query(), ...form });
    const unknown = await par({ resource: 'https://nowhere.example.com/' }).expect(400);
    expect(unknown.body.error).toBe('invalid_target');
    const scope = await par({ scope: 'openid vault:read' }).expect(400);
    expect(scope.body.error).toBe('invalid_scope');
    const pushed = await par({ resource: TOOLS, scope: 'openid tools:write tools:read' }).expect(201);
    const res = await browserFlow(
      request.agent(h.publicApp),
      { client_id: app.app_id, request_uri: pushed.body.request_uri },
      orbUser,
    );
    const tokens = await token({ code: callbackParams(res).code }).expect(200);
    expect(jose.decodeJwt(tokens.body.access_token)).toMatchObject({ aud: TOOLS, scope: 'tools:read tools:write' });
  });

  it('holds the resource’s minimum level: a device-level person gets unmet_authentication_requirements', async () => {
    const agent = request.agent(h.publicApp);
    const page = await browserFlow(agent, query({ resource: VAULT, scope: 'openid vault:read' }), deviceUser);
    expect(page.status).toBe(403);
    // the page names who asks: the resource, not the app (which has no minimum of its own)
    expect(page.text).toContain('Vault, which Test app asks to use, requires a higher verification level');
    expect(page.text).toContain('Vault asks for people verified at level <strong id="wanted-level">orb</strong>');
    const silent = await agent
      .get('/authorize')
      .query(query({ resource: VAULT, scope: 'openid vault:read', prompt: 'none' }));
    expect(callbackParams(silent)).toMatchObject({ error: 'unmet_authentication_requirements', state: 'st-1' });
    // the same person, for a resource without a minimum
    expect((await code({}, deviceUser, agent)).code).toMatch(/^[0-9a-f]{64}$/);
    // an orb-verified person passes
    const orb = await code({ resource: VAULT, scope: 'openid vault:read' });
    const res = await token({ code: orb.code }).expect(200);
    expect(jose.decodeJwt(res.body.access_token)).toMatchObject({ aud: VAULT, acr: 'urn:attest:loa:orb' });
  });

  it('binds a resource token to the DPoP key of the exchange (cnf.jkt)', async () => {
    const { privateKey, publicKey } = await jose.generateKeyPair('ES256', { extractable: true });
    const jwk = await jose.exportJWK(publicKey);
    const proof = await new jose.SignJWT({ htm: 'POST', htu: `${BASE_URL}/token`, jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .setIssuedAt()
      .sign(privateKey);
    const params = await code();
    const res = await token({ code: params.code }).set('DPoP', proof).expect(200);
    expect(res.body.token_type).toBe('DPoP');
    const claims = jose.decodeJwt(res.body.access_token) as { cnf?: { jkt: string }; aud: string };
    expect(claims.aud).toBe(TOOLS);
    expect(claims.cnf?.jkt).toBe(await jose.calculateJwkThumbprint(jwk, 'sha256'));
    const introspected = await introspectAs(tools, res.body.access_token).expect(200);
    expect(introspected.body).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: claims.cnf?.jkt } });
  });

  describe('/introspect by the resource server (RFC 7662 §2.2)', () => {
    it('tells the resource about its tokens', async () => {
      const params = await code();
      const res = await token({ code: params.code }).expect(200);
      const answer = await introspectAs(tools, res.body.access_token).expect(200);
      const claims = jose.decodeJwt(res.body.access_token);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.body).toEqual({
        active: true,
        iss: BASE_URL,
        aud: TOOLS,
        client_id: app.app_id,
        sub: claims.sub,
        scope: 'tools:read',
        exp: claims.exp,
        iat: claims.iat,
        jti: claims.jti,
        token_type: 'Bearer',
        acr: 'urn:attest:loa:orb',
        amr: claims.amr,
        auth_time: claims.auth_time,
      });
      // the app checks the token it got, as RFC 7662 lets it: active too, while the person's consent covers it
      const byApp = await request(h.publicApp)
        .post('/introspect')
        .set('Authorization', basic(app.app_id, app.client_secret))
        .type('form')
        .send({ token: res.body.access_token })
        .expect(200);
      expect(byApp.body).toMatchObject({ active: true, client_id: app.app_id, sub: claims.sub, scope: 'tools:read' });
      await request(h.publicApp)
        .post('/revoke')
        .set('Authorization', basic(app.app_id, app.client_secret))
        .type('form')
        .send({ token: res.body.access_token })
        .expect(200);
      for (const by of [basic(app.app_id, app.client_secret), basic(tools.resource_id, tools.introspection_secret)]) {
        const after = await request(h.publicApp)
          .post('/introspect')
          .set('Authorization', by)
          .type('form')
          .send({ token: res.body.access_token })
          .expect(200);
        expect(after.body).toEqual({ active: false });
      }
    });

    it('answers 200 {"active": false} for a malformed, forged, another audience’s or ended token; 401 for its own bad credentials', async () => {
      const params = await code();
      const forTools = (await token({ code: params.code }).expect(200)).body.access_token as string;
      const appToken = (await token({ code: (await code({ resource: '' })).code }).expect(200)).body
        .access_token as string;
      const [head, body] = forTools.split('.');
      for (const value of ['not-a-token', `${head}.${body}.${'A'.repeat(342)}`, appToken]) {
        const res = await introspectAs(tools, value).expect(200);
        expect(res.body).toEqual({ active: false });
      }
      // another resource's server learns nothing about a token for tools
      expect((await introspectAs(vault, forTools).expect(200)).body).toEqual({ active: false });
      // wrong secret, unknown resource: the caller's own authentication fails
      const wrong = await introspectAs(tools, forTools, 'rs_wrong').expect(401);
      expect(wrong.body.code).toBe('unauthenticated');
      expect(wrong.headers['www-authenticate']).toMatch(/^Basic /);
      await introspectAs({ ...tools, resource_id: `res_${'0'.repeat(32)}` }, forTools).expect(401);
      // the consent withdrawn: the token no longer holds
      await admin('delete', `/admin/users/${orbUser.user_id}/consents/${app.app_id}`).expect(204);
      expect((await introspectAs(tools, forTools).expect(200)).body).toEqual({ active: false });
    });

    it('keeps the apps’ contract: an app introspecting a malformed token gets 401 invalid_token', async () => {
      const res = await request(h.publicApp)
        .post('/introspect')
        .set('Authorization', basic(app.app_id, app.client_secret))
        .type('form')
        .send({ token: 'not-a-token' })
        .expect(401);
      expect(res.body).toEqual({ code: 'invalid_token', detail: 'Token is invalid or expired.', attribute: 'token' });
    });
  });
});
