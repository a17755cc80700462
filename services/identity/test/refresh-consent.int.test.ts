import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import {
  ADMIN_TOKEN,
  basic,
  browserFlow,
  callbackParams,
  createUser,
  hidden,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

const TOOLS = 'https://tools.example.com/mcp';
const LOOPBACK = 'http://127.0.0.1:33418/callback';

/**
 * Who gets a refresh token, and that the person consents to it (issue 41): offline_access in scope, or a
 * self-registered client's refresh_token grant type (as MCP clients register); the consent page says so in
 * words, and a consent given without it does not cover a later request that would give one.
 */
describe('refresh tokens: who gets one, and the consent to it', () => {
  let h: IdentityHarness;
  let user: { username: string; password: string; user_id: string };

  beforeAll(async () => {
    h = await identityHarness({ REGISTRATIONS_PER_ADDRESS: '100' });
    user = await createUser(h);
    await request(h.adminApp)
      .post('/admin/resources')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ uri: TOOLS, name: 'Tools', scopes: ['tools:read'] })
      .expect(201);
  });
  afterAll(() => h.close());

  const pkce = () => {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  };

  const registration = (grantTypes: string[]) => ({
    client_name: 'An MCP host',
    redirect_uris: [LOOPBACK],
    grant_types: grantTypes,
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  });
  const registered = async (
    grantTypes: string[],
  ): Promise<{ client_id: string; registration_access_token: string }> => {
    const res = await request(h.publicApp).post('/register').send(registration(grantTypes));
    expect(res.status).toBe(201);
    expect(res.body.grant_types).toEqual(grantTypes);
    return res.body;
  };
  const register = async (grantTypes: string[]): Promise<string> => (await registered(grantTypes)).client_id;

  /** The consent page for a request, after signing in; the agent keeps the session. */
  async function consentPageFor(agent: ReturnType<typeof request.agent>, query: Record<string, string>) {
    let res = await agent.get('/authorize').query(query);
    for (let i = 0; i < 5 && res.status >= 300 && res.status < 400; i++) {
      const location = res.headers.location as string;
      if (!location.startsWith('/')) return res;
      res = await agent.get(location);
      if (res.status === 200 && res.text.includes('name="password"'))
        res = await agent
          .post('/signin')
          .type('form')
          .send({
            interaction: hidden(res.text, 'interaction'),
            csrf: hidden(res.text, 'csrf'),
            username: user.username,
            password: user.password,
          });
    }
    return res;
  }

  /** The person allows what the consent page asks. */
  const approve = (agent: ReturnType<typeof request.agent>, page: request.Response) =>
    agent
      .post('/consent')
      .type('form')
      .send({
        interaction: hidden(page.text, 'interaction'),
        csrf: hidden(page.text, 'csrf'),
        decision: 'approve',
      });
  /** A public client's code request with PKCE, to the loopback redirect. */
  const codeRequest = (clientId: string, challenge: string, scope: string, extra: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: LOOPBACK,
    scope,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
  const exchange = (clientId: string, code: string, verifier: string, redirectUri: string) =>
    request(h.publicApp).post('/token').type('form').send({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: clientId,
    });
  const confidentialExchange = (app: { app_id: string; client_secret: string }, code: string) =>
    request(h.publicApp)
      .post('/token')
      .type('form')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });

  it('a client registered with refresh_token gets one without offline_access; the consent page says so', async () => {
    const clientId = await register(['authorization_code', 'refresh_token']);
    const { verifier, challenge } = pkce();
    const agent = request.agent(h.publicApp);
    const query = codeRequest(clientId, challenge, 'openid tools:read', { resource: TOOLS, state: 's1' });
    const page = await consentPageFor(agent, query);
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-scope="offline_access"');
    expect(page.text).toContain('Keep this access when you are not using it, until you withdraw it');
    expect(page.text).toContain('data-scope="tools:read"');
    const approved = await approve(agent, page);
    const params = callbackParams(approved);
    expect(params.state).toBe('s1');
    const tokens = await exchange(clientId, params.code, verifier, LOOPBACK);
    expect(tokens.status).toBe(200);
    expect(tokens.body.refresh_token).toEqual(expect.any(String));
    // it works: rotated once
    const refreshed = await request(h.publicApp)
      .post('/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: clientId });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toEqual(expect.any(String));
    expect(refreshed.body.refresh_token).not.toBe(tokens.body.refresh_token);
  });

  it('a client registered without refresh_token gets none, and its consent page does not offer it', async () => {
    const clientId = await register(['authorization_code']);
    const { verifier, challenge } = pkce();
    const agent = request.agent(h.publicApp);
    const page = await consentPageFor(
      agent,
      codeRequest(clientId, challenge, 'openid tools:read', { resource: TOOLS }),
    );
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-scope="tools:read"');
    expect(page.text).not.toContain('data-scope="offline_access"');
    const approved = await approve(agent, page);
    const tokens = await exchange(clientId, callbackParams(approved).code, verifier, LOOPBACK);
    expect(tokens.status).toBe(200);
    expect(tokens.body.access_token).toEqual(expect.any(String));
    expect(tokens.body).not.toHaveProperty('refresh_token');
  });

  it('a client registered without refresh_token gets none even asking offline_access; the page does not offer it', async () => {
    const clientId = await register(['authorization_code']);
    const { verifier, challenge } = pkce();
    const agent = request.agent(h.publicApp);
    const page = await consentPageFor(agent, codeRequest(clientId, challenge, 'openid offline_access'));
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-scope="openid"');
    expect(page.text).not.toContain('data-scope="offline_access"');
    const approved = await approve(agent, page);
    const tokens = await exchange(clientId, callbackParams(approved).code, verifier, LOOPBACK);
    expect(tokens.status).toBe(200);
    expect(tokens.body.id_token).toEqual(expect.any(String));
    expect(tokens.body).not.toHaveProperty('refresh_token');
  });

  it('a client that drops refresh_token from its registration (RFC 7592) refreshes no more', async () => {
    const client = await registered(['authorization_code', 'refresh_token']);
    const { verifier, challenge } = pkce();
    const { code } = callbackParams(
      await browserFlow(request.agent(h.publicApp), codeRequest(client.client_id, challenge, 'openid'), user),
    );
    const tokens = await exchange(client.client_id, code, verifier, LOOPBACK);
    expect(tokens.body.refresh_token).toEqual(expect.any(String));
    const updated = await request(h.publicApp)
      .put(`/register/${client.client_id}`)
      .set('Authorization', `Bearer ${client.registration_access_token}`)
      .send({ ...registration(['authorization_code']), client_id: client.client_id });
    expect(updated.status).toBe(200);
    expect(updated.body.grant_types).toEqual(['authorization_code']);
    const refused = await request(h.publicApp)
      .post('/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: client.client_id });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'unauthorized_client' });
    expect(refused.body.error_description).toContain('refresh_token');
  });

  it('a consent given without offline_access does not cover a request for it: asked again, prompt=none refused', async () => {
    const app = (
      await request(h.adminApp)
        .post('/admin/apps')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({ name: 'Web', redirect_uris: [REDIRECT_URI] })
        .expect(201)
    ).body as { app_id: string; client_secret: string };
    const agent = request.agent(h.publicApp);
    const base = { response_type: 'code', client_id: app.app_id, redirect_uri: REDIRECT_URI };
    // consented to the sign-in alone
    const first = await browserFlow(agent, { ...base, scope: 'openid profile', state: 'a' }, user);
    expect(callbackParams(first).code).toEqual(expect.any(String));
    const { code: noRefreshCode } = callbackParams(
      await browserFlow(agent, { ...base, scope: 'openid profile', prompt: 'none', state: 'b' }, user),
    );
    const plain = await confidentialExchange(app, noRefreshCode);
    expect(plain.status).toBe(200);
    expect(plain.body).not.toHaveProperty('refresh_token');

    // offline_access silently: refused, nothing given
    const silent = await agent
      .get('/authorize')
      .query({ ...base, scope: 'openid profile offline_access', prompt: 'none', state: 'c' });
    expect(silent.status).toBe(302);
    expect(callbackParams(silent)).toMatchObject({ error: 'consent_required', state: 'c' });

    // with the page: it lists offline access; approved, the code's exchange gives a refresh token
    const page = await consentPageFor(agent, { ...base, scope: 'openid profile offline_access', state: 'd' });
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-scope="offline_access"');
    const approved = await approve(agent, page);
    const tokens = await confidentialExchange(app, callbackParams(approved).code);
    expect(tokens.status).toBe(200);
    expect(tokens.body.refresh_token).toEqual(expect.any(String));

    // now consented: a silent request for it goes through
    const again = await agent
      .get('/authorize')
      .query({ ...base, scope: 'openid profile offline_access', prompt: 'none', state: 'e' });
    expect(callbackParams(again)).toMatchObject({ code: expect.any(String), state: 'e' });
  });
});
