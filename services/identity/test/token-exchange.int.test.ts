import { spawn } from 'node:child_process';
import type { Server } from 'node:http';
import path from 'node:path';
import request from 'supertest';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { ADMIN_TOKEN, basic, createUser, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';
import {
  ACCESS_TOKEN,
  delegationClient,
  TOKEN_EXCHANGE,
  TOOLS,
  type Client,
  type Resource,
} from './delegation-support';

type OpenIdClient = typeof import('openid-client');
type Jose = typeof import('jose');

const VAULT = 'https://vault.example.com/api';

/**
 * Delegation (issue 42, RFC 8693): an agent exchanges a person's access token with openid-client's
 * genericGrantRequest for a short-lived token with `act`, which the resource server and the agent see at
 * /introspect; narrowed scopes are kept, widened ones refused; an app not allowed to act for people is
 * refused; a chain nests `act` at most 2 deep. (The account page's end: account-agents.int.test.ts.)
 */
describe('token exchange (RFC 8693): agents acting for people', () => {
  let oidc: OpenIdClient;
  let jose: Jose;
  let h: IdentityHarness;
  let server: Server;
  let issuer: string;
  let web: Client;
  let agent: Client;
  let relay: Client;
  let third: Client;
  let rogue: Client;
  let publicApp: { app_id: string };
  let tools: Resource;
  let user: { username: string; password: string; user_id: string };

  const admin = (method: 'post' | 'get' | 'patch', path: string) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
  const newApp = async (name: string, extra: Record<string, unknown> = {}) =>
    (
      await admin('post', '/admin/apps')
        .send({ name, redirect_uris: [REDIRECT_URI], ...extra })
        .expect(201)
    ).body as Client & { may_act_for_users: boolean };

  beforeAll(async () => {
    oidc = await import('openid-client');
    jose = await import('jose');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: issuer, TOKEN_EXCHANGE_TTL_SECONDS: '600' });
    await new Promise<void>((resolve) => {
      server = h.publicApp.listen(port, '127.0.0.1', () => resolve());
    });
    web = await newApp('Web');
    const created = await newApp('Travel agent', { may_act_for_users: true });
    expect(created.may_act_for_users).toBe(true);
    agent = created;
    relay = await newApp('Relay agent');
    // the operator's leave, given after creation through PATCH (pnpm manage app update --may-act-for-users)
    const patched = await admin('patch', `/admin/apps/${relay.app_id}`).send({ may_act_for_users: true }).expect(200);
    expect(patched.body.may_act_for_users).toBe(true);
    third = await newApp('Third agent', { may_act_for_users: true });
    rogue = await newApp('Rogue');
    expect((await admin('get', `/admin/apps/${rogue.app_id}`).expect(200)).body.may_act_for_users).toBe(false);
    publicApp = await newApp('CLI', { token_endpoint_auth_method: 'none' });
    user = await createUser(h);
    tools = (
      await admin('post', '/admin/resources')
        .send({
          uri: TOOLS,
          name: 'Tools',
          scopes: ['tools:read', 'tools:write'],
          // the apps that get client_credentials tokens for it below (actor tokens, an app's own token)
          machine_clients: [web, agent, relay, third, rogue].map((a) => a.app_id),
        })
        .expect(201)
    ).body;
    await admin('post', '/admin/resources')
      .send({ uri: VAULT, name: 'Vault', scopes: ['vault:read'] })
      .expect(201);
  });
  afterAll(async () => {
    if (server) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    await h?.close();
  });

  const te = () => delegationClient(oidc, () => ({ h, issuer, user }));
  const personToken = async (
    client: Client,
    scope = 'openid tools:read tools:write',
    resource: string | null = TOOLS,
  ) => (await te().signIn(client, scope, resource)).access_token;
  const exchange = (client: Client, subjectToken: string, extra: Record<string, string> = {}) =>
    te().exchange(client, subjectToken, extra);
  const oauthError = (promise: Promise<unknown>) => te().oauthError(promise);
  /** The same, as a raw form (for the refusals' bodies). */
  const exchangeRaw = (client: { app_id: string; client_secret?: string }, form: Record<string, string>) => {
    const req = request(h.publicApp).post('/token').type('form');
    if (client.client_secret) req.set('Authorization', basic(client.app_id, client.client_secret));
    return req.send({
      grant_type: TOKEN_EXCHANGE,
      ...(client.client_secret ? {} : { client_id: client.app_id }),
      ...form,
    });
  };
  const asResource = (token: string) => te().introspectAs(tools.resource_id, tools.introspection_secret, token);
  const asApp = (client: Client, token: string) => te().introspectAs(client.app_id, client.client_secret, token);
  async function verified(token: string) {
    const jwks = (await request(h.publicApp).get('/jwks').expect(200)).body;
    return (await jose.jwtVerify(token, jose.createLocalJWKSet(jwks), { issuer, audience: TOOLS, typ: 'at+jwt' }))
      .payload;
  }

  it('advertises the grant in discovery', async () => {
    const doc = (await request(h.publicApp).get('/.well-known/openid-configuration').expect(200)).body;
    expect(doc.grant_types_supported).toContain(TOKEN_EXCHANGE);
  });

  it("an agent exchanges a person's token; the resource sees act, the person's pairwise sub and acr, one aud", async () => {
    const subjectToken = await personToken(web);
    const subject = jose.decodeJwt(subjectToken);
    const res = await exchange(agent, subjectToken, { resource: TOOLS });
    expect(res.issued_token_type).toBe(ACCESS_TOKEN);
    expect(res.token_type).toBe('bearer');
    expect(res.scope).toBe('tools:read tools:write');
    expect(res.expires_in).toBeGreaterThan(0);
    expect(res.expires_in).toBeLessThanOrEqual(600);
    expect(res.refresh_token).toBeUndefined();

    const claims = await verified(res.access_token);
    expect(claims).toMatchObject({
      aud: TOOLS,
      client_id: agent.app_id,
      scope: 'tools:read tools:write',
      act: { sub: agent.app_id },
      acr: subject.acr,
      auth_time: subject.auth_time,
    });
    expect(claims.exp! - claims.iat!).toBe(600);
    // the person as the agent knows them (pairwise): not the web app's identifier for them
    expect(claims.sub).not.toBe(subject.sub);
    expect(await h.ctx.kernel.subjects.userIdFor(agent.app_id, claims.sub!)).toBe(user.user_id);

    const seen = await asResource(res.access_token).expect(200);
    expect(seen.body).toMatchObject({
      active: true,
      aud: TOOLS,
      sub: claims.sub,
      client_id: agent.app_id,
      scope: 'tools:read tools:write',
      act: { sub: agent.app_id },
      acr: subject.acr,
    });
    const own = await asApp(agent, res.access_token).expect(200);
    expect(own.body).toMatchObject({ active: true, act: { sub: agent.app_id }, sub: claims.sub });
    // the resource sees no act on the person's own token
    expect((await asResource(subjectToken).expect(200)).body.act).toBeUndefined();

    const [event] = (await h.ctx.kernel.audit.list({ types: ['delegation.exchanged'], limit: 100 })).filter(
      (e) => e.detail.token_id === claims.jti,
    );
    expect(event).toMatchObject({
      actorType: 'app',
      actor: agent.app_id,
      subject: claims.sub,
      detail: { agent_id: agent.app_id, resource: TOOLS, subject_client_id: web.app_id },
    });
    expect(JSON.stringify(event)).not.toContain(user.user_id);
    const [row] = await h.storage.db.query<{ resources: string[]; scopes: string[]; ended_at: Date | null }>(
      'SELECT resources, scopes, ended_at FROM delegations WHERE user_id = $1 AND agent_id = $2',
      [user.user_id, agent.app_id],
    );
    expect(row).toEqual({
      resources: [TOOLS],
      scopes: [`${TOOLS}#tools:read`, `${TOOLS}#tools:write`],
      ended_at: null,
    });
  });

  it('exchanges a token from a request for the resource alone (no openid), held by its resource consent', async () => {
    // an app the person never signed in to with openid: its consent is the resource and its scope only
    const mcpHost = await newApp('MCP host');
    const subjectToken = await personToken(mcpHost, 'tools:read');
    expect(jose.decodeJwt(subjectToken)).toMatchObject({ aud: TOOLS, scope: 'tools:read' });
    const res = await exchange(agent, subjectToken, { resource: TOOLS });
    expect(res.scope).toBe('tools:read');
    expect((await asResource(res.access_token).expect(200)).body).toMatchObject({
      active: true,
      act: { sub: agent.app_id },
    });
  });

  it('keeps a narrowed scope, and refuses a widened scope or another audience', async () => {
    const subjectToken = await personToken(web, 'openid tools:read');
    const narrowed = await exchange(agent, subjectToken, { scope: 'tools:read', audience: TOOLS });
    expect(narrowed.scope).toBe('tools:read');
    expect((await verified(narrowed.access_token)).scope).toBe('tools:read');

    // tools:write is offered by the resource, but not in the person's token
    expect(await oauthError(exchange(agent, subjectToken, { scope: 'tools:read tools:write' }))).toBe('invalid_scope');
    const wider = await exchangeRaw(agent, {
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN,
      scope: 'tools:write',
    }).expect(400);
    expect(wider.body).toMatchObject({ error: 'invalid_scope', attribute: 'scope' });
    expect(wider.body.error_description).toContain('tools:write is not in subject_token');
    // a scope parameter naming nothing is not "every scope": refused
    const blank = await exchangeRaw(agent, {
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN,
      scope: ' ',
    });
    expect(blank.status).toBe(400);
    expect(blank.body).toMatchObject({ error: 'invalid_scope', attribute: 'scope' });

    expect(await oauthError(exchange(agent, subjectToken, { resource: VAULT }))).toBe('invalid_target');
    expect(await oauthError(exchange(agent, subjectToken, { audience: VAULT }))).toBe('invalid_target');
    const two = await exchangeRaw(agent, {
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN,
      resource: TOOLS,
      audience: VAULT,
    }).expect(400);
    expect(two.body).toMatchObject({ error: 'invalid_target', attribute: 'audience' });
  });

  it('refuses an app not allowed to act for people, and a public client; an app may exchange its own token', async () => {
    const subjectToken = await personToken(web);
    const refused = await exchangeRaw(rogue, { subject_token: subjectToken, subject_token_type: ACCESS_TOKEN }).expect(
      400,
    );
    expect(refused.body).toMatchObject({ error: 'unauthorized_client', attribute: 'subject_token' });
    expect(refused.body.error_description).toContain('may_act_for_users');
    expect(await oauthError(exchange(rogue, subjectToken))).toBe('unauthorized_client');
    const fromPublic = await exchangeRaw(publicApp, {
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN,
    }).expect(400);
    expect(fromPublic.body.error).toBe('unauthorized_client');

    // the person's consent to rogue itself (its own authorization request for the resource) lets it act
    const ownToken = await personToken(rogue, 'openid tools:read');
    const own = await exchange(rogue, ownToken);
    expect(jose.decodeJwt(own.access_token)).toMatchObject({ act: { sub: rogue.app_id }, scope: 'tools:read' });
  });

  it('refuses a subject token that is not an active person token of this issuer (invalid_grant, invalid_request)', async () => {
    const subjectToken = await personToken(web);
    const base = { subject_token: subjectToken, subject_token_type: ACCESS_TOKEN };
    const forged = await exchangeRaw(agent, { ...base, subject_token: `${subjectToken.slice(0, -4)}AAAA` }).expect(400);
    expect(forged.body).toMatchObject({ error: 'invalid_grant', attribute: 'subject_token' });
    const cc = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(web.app_id, web.client_secret))
      .type('form')
      .send({ grant_type: 'client_credentials', resource: TOOLS })
      .expect(200);
    const appToken = await exchangeRaw(agent, { ...base, subject_token: cc.body.access_token }).expect(400);
    expect(appToken.body.error).toBe('invalid_grant');
    // revoked by the app it was issued to
    const revokedToken = await personToken(web);
    await request(h.publicApp)
      .post('/revoke')
      .set('Authorization', basic(web.app_id, web.client_secret))
      .type('form')
      .send({ token: revokedToken })
      .expect(200);
    expect(await oauthError(exchange(agent, revokedToken))).toBe('invalid_grant');

    const noType = await exchangeRaw(agent, { subject_token: subjectToken }).expect(400);
    expect(noType.body).toMatchObject({ error: 'invalid_request', attribute: 'subject_token_type' });
    const idType = await exchangeRaw(agent, {
      ...base,
      requested_token_type: 'urn:ietf:params:oauth:token-type:id_token',
    }).expect(400);
    expect(idType.body).toMatchObject({ error: 'invalid_request', attribute: 'requested_token_type' });
    // a sign-in's token (for /userinfo, no resource): a token for a resource would widen it
    const signInOnly = await exchangeRaw(agent, { ...base, subject_token: await personToken(web, 'openid', null) });
    expect(signInOnly.status).toBe(400);
    expect(signInOnly.body.error).toBe('invalid_target');
  });

  it("takes the agent's own client_credentials token as actor_token, and refuses another app's", async () => {
    const subjectToken = await personToken(web);
    const ccOf = async (client: Client) =>
      (
        await request(h.publicApp)
          .post('/token')
          .set('Authorization', basic(client.app_id, client.client_secret))
          .type('form')
          .send({ grant_type: 'client_credentials', resource: TOOLS })
          .expect(200)
      ).body.access_token as string;
    const res = await exchange(agent, subjectToken, { actor_token: await ccOf(agent), actor_token_type: ACCESS_TOKEN });
    expect(jose.decodeJwt(res.access_token).act).toEqual({ sub: agent.app_id });
    const foreign = await exchangeRaw(agent, {
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN,
      actor_token: await ccOf(web),
      actor_token_type: ACCESS_TOKEN,
    }).expect(400);
    expect(foreign.body).toMatchObject({ error: 'invalid_request', attribute: 'actor_token' });
  });

  it('binds the delegated token to a DPoP key when the exchange carries a proof; the agent can revoke it', async () => {
    const subjectToken = await personToken(web);
    const config = await te().configFor(agent);
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair());
    const res = await oidc.genericGrantRequest(
      config,
      TOKEN_EXCHANGE,
      { subject_token: subjectToken, subject_token_type: ACCESS_TOKEN },
      { DPoP },
    );
    expect(res.token_type).toBe('dpop');
    const claims = await verified(res.access_token);
    expect(claims.cnf).toEqual({ jkt: expect.any(String) });
    expect((await asResource(res.access_token).expect(200)).body).toMatchObject({
      active: true,
      token_type: 'DPoP',
      act: { sub: agent.app_id },
    });
    await request(h.publicApp)
      .post('/revoke')
      .set('Authorization', basic(agent.app_id, agent.client_secret))
      .type('form')
      .send({ token: res.access_token })
      .expect(200);
    expect((await asResource(res.access_token).expect(200)).body).toEqual({ active: false });
    expect((await asApp(agent, res.access_token).expect(200)).body).toEqual({ active: false });
  });

  it('keeps a DPoP-bound subject token bound: exchanged only with a proof by its key, which binds the new token', async () => {
    const config = await te().configFor(agent);
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair());
    const bound = await oidc.genericGrantRequest(
      config,
      TOKEN_EXCHANGE,
      { subject_token: await personToken(web), subject_token_type: ACCESS_TOKEN },
      { DPoP },
    );
    const jkt = ((await verified(bound.access_token)).cnf as { jkt: string }).jkt;
    // without a proof (a bearer token would come out), or with another key's: refused, naming the header
    const bare = await exchangeRaw(relay, { subject_token: bound.access_token, subject_token_type: ACCESS_TOKEN });
    expect(bare.status).toBe(400);
    expect(bare.body).toMatchObject({ error: 'invalid_dpop_proof', attribute: 'DPoP' });
    const relayConfig = await te().configFor(relay);
    const otherKey = oidc.getDPoPHandle(relayConfig, await oidc.randomDPoPKeyPair());
    const other = oidc.genericGrantRequest(
      relayConfig,
      TOKEN_EXCHANGE,
      { subject_token: bound.access_token, subject_token_type: ACCESS_TOKEN },
      { DPoP: otherKey },
    );
    expect(await oauthError(other)).toBe('invalid_dpop_proof');
    // with a proof by its key: the new token is bound to the same key
    const again = await oidc.genericGrantRequest(
      config,
      TOKEN_EXCHANGE,
      { subject_token: bound.access_token, subject_token_type: ACCESS_TOKEN, scope: 'tools:read' },
      { DPoP },
    );
    expect(again.token_type).toBe('dpop');
    expect((await verified(again.access_token)).cnf).toEqual({ jkt });
  });

  it('a token comes from at most 4 exchanges, the same agent exchanging its own again included', async () => {
    let token = await personToken(web);
    for (let i = 0; i < 4; i++) token = (await exchange(agent, token)).access_token;
    expect(((await verified(token)).origin as { jti: string[] }).jti).toHaveLength(4);
    const refused = await exchangeRaw(agent, { subject_token: token, subject_token_type: ACCESS_TOKEN });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_request', attribute: 'subject_token' });
    expect(refused.body.error_description).toContain('comes from 4 exchanges already');
  });

  it('nests act for a chain of agents, at most 2 deep', async () => {
    const subjectToken = await personToken(web, 'openid tools:read tools:write');
    const first = await exchange(agent, subjectToken, { scope: 'tools:read tools:write' });
    const second = await exchange(relay, first.access_token, { scope: 'tools:read' });
    const claims = await verified(second.access_token);
    expect(claims).toMatchObject({
      client_id: relay.app_id,
      scope: 'tools:read',
      act: { sub: relay.app_id, act: { sub: agent.app_id } },
    });
    expect(await h.ctx.kernel.subjects.userIdFor(relay.app_id, claims.sub!)).toBe(user.user_id);
    expect((await asResource(second.access_token).expect(200)).body).toMatchObject({
      active: true,
      act: { sub: relay.app_id, act: { sub: agent.app_id } },
    });
    // the chained token cannot be widened back (the relay exchanging it again keeps the chain as it is)
    expect(await oauthError(exchange(relay, second.access_token, { scope: 'tools:write' }))).toBe('invalid_scope');
    const again = await exchange(relay, second.access_token);
    expect(jose.decodeJwt(again.access_token).act).toEqual({ sub: relay.app_id, act: { sub: agent.app_id } });
    const tooDeep = await exchangeRaw(third, {
      subject_token: second.access_token,
      subject_token_type: ACCESS_TOKEN,
    }).expect(400);
    expect(tooDeep.body).toMatchObject({ error: 'invalid_request', attribute: 'subject_token' });
    expect(tooDeep.body.error_description).toContain('at most 2');
  });

  /** examples/delegating-agent/exchange.mjs, run as examples/README.md says: its exit code and output. */
  const runExample = (env: Record<string, string>, args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const script = path.join(__dirname, '..', '..', '..', 'examples', 'delegating-agent', 'exchange.mjs');
      const child = spawn(process.execPath, [script, ...args], { env: { PATH: process.env.PATH, ...env } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  it('the example agent (examples/delegating-agent) exchanges a token and sees act; a refused one exits 2', async () => {
    const subjectToken = await personToken(web);
    const env = {
      ISSUER: issuer,
      AGENT_ID: agent.app_id,
      AGENT_SECRET: agent.client_secret,
      SUBJECT_TOKEN: subjectToken,
    };
    const ran = await runExample(env, ['tools:read']);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const out = JSON.parse(ran.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      issued_token_type: ACCESS_TOKEN,
      scope: 'tools:read',
      active: true,
      act: { sub: agent.app_id },
      acr: jose.decodeJwt(subjectToken).acr,
    });
    const refused = await runExample({ ...env, AGENT_ID: rogue.app_id, AGENT_SECRET: rogue.client_secret }, []);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('exchange refused: unauthorized_client');
  });
});
