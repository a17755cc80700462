import type { Server } from 'node:http';
import request from 'supertest';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { ADMIN_TOKEN, basic, createUser, hidden, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';

type OpenIdClient = typeof import('openid-client');
type Jose = typeof import('jose');
type Client = { app_id: string; client_secret?: string };
type Agent = ReturnType<typeof request.agent>;
type Person = { username: string; password: string; user_id: string };

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const TOOLS = 'https://tools.example.com/mcp';
const VAULT = 'https://vault.example.com/api';
const ORB = 'urn:attest:loa:orb';
const DEVICE = 'urn:attest:loa:device';
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

/**
 * The Device Authorization Grant (RFC 8628; issue 41): openid-client starts it and polls, a person types the
 * code at /device, signs in and approves or denies through the pages; the answers while polling, the tokens
 * once, the limits and the verification levels.
 */
describe('the device flow', () => {
  let oidc: OpenIdClient;
  let jose: Jose;
  let h: IdentityHarness;
  let server: Server;
  let issuer: string;
  /** The server's clock runs this far ahead of the real one (polling intervals, expiry). */
  let skew = 0;
  let cli: Client;
  let backend: Client;
  let plain: Client;
  let orbPerson: Person;
  let devicePerson: Person;

  const admin = (method: 'post' | 'get' | 'patch', path: string) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  beforeAll(async () => {
    oidc = await import('openid-client');
    jose = await import('jose');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: issuer }, {}, { now: () => Date.now() + skew });
    await new Promise<void>((resolve) => {
      server = h.publicApp.listen(port, '127.0.0.1', () => resolve());
    });
    const app = async (body: Record<string, unknown>) =>
      (
        await admin('post', '/admin/apps')
          .send({ redirect_uris: [REDIRECT_URI], ...body })
          .expect(201)
      ).body as Client;
    cli = await app({ name: 'Terminal CLI', token_endpoint_auth_method: 'none', device_authorization_grant: true });
    backend = await app({ name: 'Smart TV', device_authorization_grant: true });
    plain = await app({ name: 'Web app' });
    await admin('post', '/admin/resources')
      .send({ uri: TOOLS, name: 'Tools', scopes: ['tools:read', 'tools:write'] })
      .expect(201);
    await admin('post', '/admin/resources')
      .send({ uri: VAULT, name: 'Vault', scopes: ['vault:read'], min_verification_level: 'orb' })
      .expect(201);
    orbPerson = await createUser(h);
    devicePerson = await createUser(h, { verification_level: 'device' });
  });
  afterAll(async () => {
    if (server) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    await h?.close();
  });

  const configOf = (client: Client) =>
    oidc.discovery(
      new URL(issuer),
      client.app_id,
      undefined,
      client.client_secret ? oidc.ClientSecretBasic(client.client_secret) : oidc.None(),
      { execute: [oidc.allowInsecureRequests] },
    );
  /** /device_authorization as the client sends it. */
  const start = (client: Client, form: Record<string, string>) => {
    const req = request(h.publicApp).post('/device_authorization').type('form');
    if (client.client_secret) req.set('Authorization', basic(client.app_id, client.client_secret));
    return req.send({ ...(client.client_secret ? {} : { client_id: client.app_id }), ...form });
  };
  /** One poll of /token. */
  const poll = (client: Client, deviceCode: string, extra: Record<string, string> = {}) => {
    const req = request(h.publicApp).post('/token').type('form');
    if (client.client_secret) req.set('Authorization', basic(client.app_id, client.client_secret));
    return req.send({
      grant_type: DEVICE_GRANT,
      device_code: deviceCode,
      ...(client.client_secret ? {} : { client_id: client.app_id }),
      ...extra,
    });
  };
  const pollError = (res: request.Response) => [res.status, res.body.error];
  const payload = (jwt: string) => jose.decodeJwt(jwt);

  /** The person's way through the pages: the code page, sign-in (next=device), back to the approval page. */
  async function signInAt(agent: Agent, userCode: string, person: Person): Promise<request.Response> {
    const entered = await agent.get('/device').query({ user_code: userCode });
    expect(entered.status).toBe(200);
    // verification_uri_complete pre-fills the code; the person still confirms it
    expect(entered.text).toContain(`value="${userCode}"`);
    const confirmed = await agent
      .post('/device')
      .type('form')
      .send({ csrf: hidden(entered.text, 'csrf'), user_code: userCode, decision: 'confirm' });
    expect(confirmed.status).toBe(303);
    // the code as the device shows it (XXXX-XXXX), whatever was typed
    const letters = userCode.replace('-', '').toUpperCase();
    const shown = `${letters.slice(0, 4)}-${letters.slice(4)}`;
    expect(confirmed.headers.location).toBe(`/signin?next=device&user_code=${shown}`);
    return signInThrough(agent, confirmed.headers.location as string, person);
  }
  /** The sign-in page of a device code (next=device), then back to /device. */
  async function signInThrough(agent: Agent, signInUrl: string, person: Person): Promise<request.Response> {
    const signInPage = await agent.get(signInUrl);
    expect(signInPage.status).toBe(200);
    const userCode = new URL(signInUrl, issuer).searchParams.get('user_code')!;
    const signedIn = await agent
      .post('/signin')
      .type('form')
      .send({
        next: 'device',
        user_code: userCode,
        csrf: hidden(signInPage.text, 'csrf'),
        username: person.username,
        password: person.password,
      });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.location).toBe(`/device?user_code=${userCode}`);
    return agent.get(signedIn.headers.location as string);
  }
  const decide = (agent: Agent, page: request.Response, userCode: string, decision: 'approve' | 'deny') =>
    agent
      .post('/device')
      .type('form')
      .send({ csrf: hidden(page.text, 'csrf'), user_code: userCode, decision });

  it('is in the discovery documents, and the token error lists it', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const doc = (await request(h.publicApp).get(path).expect(200)).body;
      expect(doc.device_authorization_endpoint).toBe(`${issuer}/device_authorization`);
      expect(doc.grant_types_supported).toContain(DEVICE_GRANT);
    }
    const res = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(backend.app_id, backend.client_secret!))
      .type('form')
      .send({ grant_type: 'password' });
    expect(res.body.error).toBe('unsupported_grant_type');
    expect(res.body.error_description).toContain(DEVICE_GRANT);
  });

  it('openid-client: a public CLI gets an id_token, a token for the resource and a refresh token, once', async () => {
    const config = await configOf(cli);
    const started = await oidc.initiateDeviceAuthorization(config, {
      scope: 'openid profile offline_access tools:read',
      resource: TOOLS,
    });
    expect(started).toMatchObject({
      user_code: expect.stringMatching(USER_CODE),
      verification_uri: `${issuer}/device`,
      verification_uri_complete: `${issuer}/device?user_code=${started.user_code}`,
      expires_in: 600,
      interval: 5,
    });
    expect(started.device_code).toMatch(/^[0-9a-f]{64}$/);
    // only keyed hashes are stored
    const rows = await h.storage.db.query<Record<string, unknown>>('SELECT * FROM device_authorizations');
    expect(JSON.stringify(rows)).not.toContain(started.device_code);
    expect(JSON.stringify(rows)).not.toContain(started.user_code);

    expect(pollError(await poll(cli, started.device_code))).toEqual([400, 'authorization_pending']);

    const agent = request.agent(h.publicApp);
    // typed in lower case without the dash, as people do
    const typed = started.user_code.replace('-', '').toLowerCase();
    const page = await signInAt(agent, typed, orbPerson);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Terminal CLI wants to');
    expect(page.text).toContain('Access <strong>Tools</strong> as you');
    expect(page.text).toContain('data-scope="profile"');
    expect(page.text).toContain('data-scope="tools:read"');
    expect(page.text).not.toContain('data-scope="tools:write"');
    expect(page.text).toContain(`<strong id="user-code">${started.user_code}</strong>`);
    const done = await decide(agent, page, started.user_code, 'approve');
    expect(done.status).toBe(200);
    expect(done.text).toContain('Device allowed');

    // polled no sooner than the interval: openid-client waits `interval` seconds before each poll
    skew += 6000;
    const tokens = await oidc.pollDeviceAuthorizationGrant(config, { ...started, interval: 0 });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('tools:read');
    expect(tokens.refresh_token).toMatch(/^[0-9a-f]{64}$/);
    const idClaims = tokens.claims()!;
    expect(idClaims).toMatchObject({ iss: issuer, aud: cli.app_id, acr: ORB, name: 'Ada Lovelace' });
    const access = payload(tokens.access_token);
    expect(access).toMatchObject({
      aud: TOOLS,
      scope: 'tools:read',
      client_id: cli.app_id,
      sub: idClaims.sub,
      acr: ORB,
    });

    // single use: the next poll is invalid_grant
    expect(pollError(await poll(cli, started.device_code))).toEqual([400, 'invalid_grant']);
    // the consent is recorded as /authorize records it
    expect(await h.ctx.kernel.consents.find(orbPerson.user_id, cli.app_id)).toEqual(
      expect.arrayContaining(['openid', 'profile', TOOLS, `${TOOLS}#tools:read`]),
    );
    const approved = await h.ctx.kernel.audit.list({ types: ['device.approved'], limit: 100 });
    expect(approved.find((e) => e.subject === orbPerson.user_id)?.detail).toMatchObject({
      app_id: cli.app_id,
      resource: TOOLS,
    });
    // the refresh token works, bound to the same resource
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(payload(refreshed.access_token)).toMatchObject({ aud: TOOLS, scope: 'tools:read' });
  });

  it('openid-client: a confidential app is denied (access_denied, audited) and its code answers so until it expires', async () => {
    const config = await configOf(backend);
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    const agent = request.agent(h.publicApp);
    const page = await signInAt(agent, started.user_code, orbPerson);
    expect(page.text).toContain('Smart TV wants to');
    const done = await decide(agent, page, started.user_code, 'deny');
    expect(done.status).toBe(200);
    expect(done.text).toContain('Device denied');
    await expect(oidc.pollDeviceAuthorizationGrant(config, { ...started, interval: 0 })).rejects.toMatchObject({
      error: 'access_denied',
    });
    const denied = await h.ctx.kernel.audit.list({ types: ['device.denied'], limit: 100 });
    expect(denied.some((e) => e.detail.app_id === backend.app_id && e.subject === orbPerson.user_id)).toBe(true);
    // the code is no longer on offer at /device
    const again = await agent.get('/device').query({ user_code: started.user_code });
    expect(again.status).toBe(400);
    expect(again.text).toContain('This code is not valid');
  });

  it('DPoP: a proof at the poll binds the tokens to its key', async () => {
    const config = await configOf(cli);
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    const agent = request.agent(h.publicApp);
    const page = await signInAt(agent, started.user_code, orbPerson);
    expect((await decide(agent, page, started.user_code, 'approve')).status).toBe(200);
    const keyPair = await oidc.randomDPoPKeyPair('ES256');
    const tokens = await oidc.pollDeviceAuthorizationGrant(
      config,
      { ...started, interval: 0 },
      {},
      { DPoP: oidc.getDPoPHandle(config, keyPair) },
    );
    expect(tokens.token_type.toLowerCase()).toBe('dpop');
    const jkt = await jose.calculateJwkThumbprint(await jose.exportJWK(keyPair.publicKey));
    expect(payload(tokens.access_token).cnf).toEqual({ jkt });
    expect(tokens.id_token).toBeDefined();
  });

  it('single use under concurrent polls: of parallel polls after the approval, exactly one gets the tokens', async () => {
    const started = (await start(backend, { scope: 'openid' }).expect(200)).body;
    const agent = request.agent(h.publicApp);
    const page = await signInAt(agent, started.user_code, orbPerson);
    expect((await decide(agent, page, started.user_code, 'approve')).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 6 }, () => poll(backend, started.device_code)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status !== 200).map(pollError)).toEqual(
      Array.from({ length: 5 }, () => [400, 'invalid_grant']),
    );
    const [row] = await h.storage.db.query<{ redeemed_at: Date | null; status: string }>(
      'SELECT redeemed_at, status FROM device_authorizations WHERE client_id = $1 ORDER BY created_at DESC LIMIT 1',
      [backend.app_id],
    );
    expect(row.status).toBe('approved');
    expect(row.redeemed_at).not.toBeNull();
  });

  it('slow_down: polled sooner than the interval, the interval grows by 5 s and is remembered', async () => {
    const started = (await start(cli, { scope: 'openid' }).expect(200)).body;
    expect(pollError(await poll(cli, started.device_code))).toEqual([400, 'authorization_pending']);
    const slow = await poll(cli, started.device_code);
    expect(pollError(slow)).toEqual([400, 'slow_down']);
    expect(slow.body.error_description).toContain('10 seconds');
    // 6 s later is still too soon for the new interval of 10 s: 15 now
    skew += 6000;
    expect(pollError(await poll(cli, started.device_code))).toEqual([400, 'slow_down']);
    skew += 16000;
    expect(pollError(await poll(cli, started.device_code))).toEqual([400, 'authorization_pending']);
    const [row] = await h.storage.db.query<{ interval_seconds: number }>(
      `SELECT interval_seconds FROM device_authorizations WHERE client_id = $1 ORDER BY created_at DESC LIMIT 1`,
      [cli.app_id],
    );
    expect(row.interval_seconds).toBe(15);
  });

  it('another client’s device_code is invalid_grant, and leaves the code as it was', async () => {
    const started = (await start(cli, { scope: 'openid' }).expect(200)).body;
    const other = await poll(backend, started.device_code);
    expect(pollError(other)).toEqual([400, 'invalid_grant']);
    expect(pollError(await poll(cli, started.device_code))).toEqual([400, 'authorization_pending']);
    expect(pollError(await poll(cli, 'f'.repeat(64)))).toEqual([400, 'invalid_grant']);
    expect(pollError(await poll(cli, 'not-a-code'))).toEqual([400, 'invalid_grant']);
    const missing = await poll(cli, '');
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: 'invalid_request', attribute: 'device_code' });
  });

  it('expired_token once DEVICE_CODE_TTL_SECONDS have passed; the code is no longer accepted at /device', async () => {
    const started = (await start(backend, { scope: 'openid' }).expect(200)).body;
    skew += 601_000;
    try {
      expect(pollError(await poll(backend, started.device_code))).toEqual([400, 'expired_token']);
      const agent = request.agent(h.publicApp);
      const entry = await agent.get('/device');
      const page = await agent
        .post('/device')
        .type('form')
        .send({ csrf: hidden(entry.text, 'csrf'), user_code: started.user_code, decision: 'confirm' });
      expect(page.status).toBe(400);
      expect(page.text).toContain('This code is not valid');
    } finally {
      skew -= 601_000;
    }
  });

  it('an app the grant is not enabled for is unauthorized_client at both endpoints', async () => {
    const res = await start(plain, { scope: 'openid' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'unauthorized_client', attribute: 'grant_type' });
    expect(res.body.error_description).toContain('--device-flow');
    expect(pollError(await poll(plain, 'a'.repeat(64)))).toEqual([400, 'unauthorized_client']);
  });

  it('an unknown resource is invalid_target, a scope it does not offer invalid_scope, as at /authorize', async () => {
    const unknown = await start(cli, { scope: 'openid', resource: 'https://nowhere.example.com/' });
    expect([unknown.status, unknown.body.error, unknown.body.attribute]).toEqual([400, 'invalid_target', 'resource']);
    const scope = await start(cli, { scope: 'openid tools:delete', resource: TOOLS });
    expect([scope.status, scope.body.error]).toEqual([400, 'invalid_scope']);
    expect(scope.body.error_description).toContain('tools:delete');
    const nothing = await start(cli, { scope: 'profile' });
    expect([nothing.status, nothing.body.error]).toEqual([400, 'invalid_scope']);
    const twice = await request(h.publicApp)
      .post('/device_authorization')
      .type('form')
      .send(
        `client_id=${cli.app_id}&scope=openid&resource=${encodeURIComponent(TOOLS)}&resource=${encodeURIComponent(VAULT)}`,
      );
    expect([twice.status, twice.body.error]).toEqual([400, 'invalid_target']);
    const wrong = await request(h.publicApp)
      .post('/device_authorization')
      .set('Authorization', basic(backend.app_id, 'sk_wrong'))
      .type('form')
      .send({ scope: 'openid' });
    expect([wrong.status, wrong.body.error]).toEqual([401, 'invalid_client']);
  });

  it('verification levels: a resource’s minimum refuses a device-level person, who may step up to an orb account', async () => {
    const started = (await start(cli, { scope: 'openid vault:read', resource: VAULT }).expect(200)).body;
    const agent = request.agent(h.publicApp);
    const refused = await signInAt(agent, started.user_code, devicePerson);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('<strong id="wanted-level">orb</strong>');
    expect(refused.text).toContain('<strong id="account-level">device</strong>');
    expect(refused.text).toContain('unmet_authentication_requirements');
    // a forged approval is refused the same way
    const forged = await decide(agent, refused, started.user_code, 'approve');
    expect(forged.status).toBe(403);
    expect(pollError(await poll(cli, started.device_code))).toEqual([400, 'authorization_pending']);
    // step-up: the page's link signs in with another account, verified at orb
    const link = /href="([^"]+)" id="switch-account"/.exec(refused.text)![1].replace(/&amp;/g, '&');
    expect(link).toBe(`/signin?next=device&user_code=${started.user_code}`);
    const stepUp = await signInThrough(agent, link, orbPerson);
    expect(stepUp.status).toBe(200);
    expect((await decide(agent, stepUp, started.user_code, 'approve')).status).toBe(200);
    skew += 6000;
    const tokens = await poll(cli, started.device_code);
    expect(tokens.status).toBe(200);
    expect(payload(tokens.body.access_token)).toMatchObject({ aud: VAULT, scope: 'vault:read', acr: ORB });
  });

  it('acr_values is voluntary (the token states the level), an essential acr of claims is required', async () => {
    const voluntary = (await start(cli, { scope: 'openid', acr_values: ORB }).expect(200)).body;
    const agent = request.agent(h.publicApp);
    const page = await signInAt(agent, voluntary.user_code, devicePerson);
    expect(page.status).toBe(200);
    expect((await decide(agent, page, voluntary.user_code, 'approve')).status).toBe(200);
    skew += 6000;
    const tokens = await poll(cli, voluntary.device_code);
    expect(tokens.status).toBe(200);
    expect(payload(tokens.body.id_token)).toMatchObject({ acr: DEVICE });

    const claims = JSON.stringify({ id_token: { acr: { essential: true, value: ORB } } });
    const essential = (await start(cli, { scope: 'openid', claims }).expect(200)).body;
    const again = await agent.get('/device').query({ user_code: essential.user_code });
    expect(again.status).toBe(403);
    expect(again.text).toContain('<strong id="wanted-level">orb</strong>');
    const bad = await start(cli, { scope: 'openid', claims: 'not json' });
    expect([bad.status, bad.body.error, bad.body.attribute]).toEqual([400, 'invalid_request', 'claims']);
  });

  it('the page refuses a form without its CSRF token', async () => {
    const started = (await start(cli, { scope: 'openid' }).expect(200)).body;
    const res = await request(h.publicApp)
      .post('/device')
      .type('form')
      .send({ csrf: 'x'.repeat(64), user_code: started.user_code, decision: 'approve' });
    expect(res.status).toBe(403);
    expect(res.text).toContain('invalid_csrf');
  });
});

/** RFC 8628 §5.1: a short user code is guessable, so wrong ones are limited per address. */
describe('the device page’s limit on wrong codes', () => {
  let h: IdentityHarness;
  let cli: Client;

  beforeAll(async () => {
    h = await identityHarness({ DEVICE_CODE_FAILURES_PER_ADDRESS: '3' });
    cli = (
      await request(h.adminApp)
        .post('/admin/apps')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({
          name: 'CLI',
          redirect_uris: [REDIRECT_URI],
          token_endpoint_auth_method: 'none',
          device_authorization_grant: true,
        })
        .expect(201)
    ).body;
  });
  afterAll(() => h?.close());

  it('counts wrong codes per address and refuses past the limit with 429, the right code included', async () => {
    const started = (
      await request(h.publicApp)
        .post('/device_authorization')
        .type('form')
        .send({ client_id: cli.app_id, scope: 'openid' })
        .expect(200)
    ).body;
    const agent = request.agent(h.publicApp);
    const page = await agent.get('/device');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<label for="user_code">Code</label>');
    const csrf = hidden(page.text, 'csrf');
    // the right code is not counted
    const right = await agent
      .post('/device')
      .type('form')
      .send({ csrf, user_code: started.user_code, decision: 'confirm' });
    expect(right.status).toBe(303);
    for (const wrong of ['BBBB-BBBB', 'not a code', 'CCCC-CCCC']) {
      const res = await agent.post('/device').type('form').send({ csrf, user_code: wrong, decision: 'confirm' });
      expect(res.status).toBe(400);
      expect(res.text).toContain('This code is not valid');
    }
    const refused = await agent
      .post('/device')
      .type('form')
      .send({ csrf, user_code: started.user_code, decision: 'confirm' });
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('Too many wrong codes');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });
});
