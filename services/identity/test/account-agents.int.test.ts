import type { Server } from 'node:http';
import request from 'supertest';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { ADMIN_TOKEN, createUser, hidden, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';
import { delegationClient, TOOLS, type Client, type Resource } from './delegation-support';

type OpenIdClient = typeof import('openid-client');
type Agent = ReturnType<typeof request.agent>;

/**
 * The account page's "Agents acting for you" (issue 42): which agent, for which resources and scopes, since
 * when, last used; ending one stops its delegated tokens (at a resource server and at the agent's
 * /introspect) and its refresh tokens at once, and no token of the person issued before can be exchanged
 * by it again. Audited.
 */
describe('account page: agents acting for you', () => {
  let oidc: OpenIdClient;
  let h: IdentityHarness;
  let server: Server;
  let issuer: string;
  let clock = 0;
  let web: Client;
  let agent: Client;
  let relay: Client;
  let tools: Resource;
  let user: { username: string; password: string; user_id: string };

  const admin = (method: 'post' | 'get', path: string) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  beforeAll(async () => {
    oidc = await import('openid-client');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: issuer }, {}, { now: () => Date.now() + clock });
    await new Promise<void>((resolve) => {
      server = h.publicApp.listen(port, '127.0.0.1', () => resolve());
    });
    const newApp = async (name: string, extra: Record<string, unknown> = {}) =>
      (
        await admin('post', '/admin/apps')
          .send({ name, redirect_uris: [REDIRECT_URI], ...extra })
          .expect(201)
      ).body as Client;
    web = await newApp('Web shop');
    agent = await newApp('Travel agent', { may_act_for_users: true });
    relay = await newApp('Relay agent', { may_act_for_users: true });
    tools = (
      await admin('post', '/admin/resources')
        .send({ uri: TOOLS, name: 'Tools', scopes: ['tools:read', 'tools:write'] })
        .expect(201)
    ).body;
  });
  beforeEach(async () => {
    user = await createUser(h);
  });
  afterAll(async () => {
    if (server) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    await h?.close();
  });

  const te = () => delegationClient(oidc, () => ({ h, issuer, user }));
  const configFor = (client: Client) => te().configFor(client);
  const signIn = (client: Client, scope: string) => te().signIn(client, scope);
  const exchange = (subjectToken: string, scope?: string) => te().exchange(agent, subjectToken, scope ? { scope } : {});
  const oauthError = (promise: Promise<unknown>) => te().oauthError(promise);
  const atResource = async (token: string) =>
    (await te().introspectAs(tools.resource_id, tools.introspection_secret, token).expect(200)).body as {
      active: boolean;
      act?: unknown;
    };
  const atAgent = async (token: string) =>
    (await te().introspectAs(agent.app_id, agent.client_secret, token).expect(200)).body as { active: boolean };

  async function onAccountPage(person = user): Promise<{ browser: Agent; page: request.Response }> {
    const browser = request.agent(h.publicApp);
    const signin = await browser.get('/signin?next=account');
    await browser
      .post('/signin')
      .type('form')
      .send({
        next: 'account',
        csrf: hidden(signin.text, 'csrf'),
        username: person.username,
        password: person.password,
      })
      .expect(303);
    const page = await browser.get('/account').expect(200);
    return { browser, page };
  }
  const listed = (html: string) => [...html.matchAll(/<li data-agent="([^"]+)">/g)].map((m) => m[1]);
  /** The person ends an agent on their account page; the browser stays signed in. */
  async function endAgent(agentId: string): Promise<Agent> {
    const { browser, page } = await onAccountPage();
    await browser
      .post('/account/agents/end')
      .type('form')
      .send({ csrf: hidden(page.text, 'csrf'), agent_id: agentId })
      .expect(303);
    return browser;
  }

  it('lists each agent with its resources and scopes, since when and last used', async () => {
    const empty = await onAccountPage();
    expect(empty.page.text).toContain('<h2 id="agents">Agents acting for you</h2>');
    expect(empty.page.text).toContain('No agent acts for you.');

    const webToken = (await signIn(web, 'openid tools:read tools:write')).access_token;
    await exchange(webToken, 'tools:read');
    const { page } = await onAccountPage();
    expect(listed(page.text)).toEqual([agent.app_id]);
    const [row] = await h.storage.db.query<{ created_at: Date; last_used_at: Date }>(
      'SELECT created_at, last_used_at FROM delegations WHERE user_id = $1',
      [user.user_id],
    );
    expect(page.text).toContain('<strong>Travel agent</strong>');
    // the web shop's consent, in words: its resource and the scope granted there, not the keys kept for them
    const shop = page.text.slice(page.text.indexOf(`<li data-app="${web.app_id}">`));
    expect(shop.slice(0, shop.indexOf('</li>'))).toContain(`Use ${TOOLS} (tools:read, tools:write)`);
    expect(shop.slice(0, shop.indexOf('</li>'))).not.toContain('#');
    expect(page.text).toContain(`<span data-resource="${TOOLS}">${TOOLS}: tools:read</span>`);
    expect(page.text).toContain(`since ${row.created_at.toISOString().slice(0, 10)}`);
    expect(page.text).toContain(`last used <time datetime="${row.last_used_at.toISOString()}">`);
    expect(page.text).toContain('aria-label="Stop Travel agent acting for you"');

    // a later exchange for a wider scope of the same resource adds it
    await exchange(webToken, 'tools:write');
    const again = await onAccountPage();
    expect(again.page.text).toContain(`<span data-resource="${TOOLS}">${TOOLS}: tools:read tools:write</span>`);
  });

  it('"End" stops the agent\'s delegated tokens and refresh tokens at once; audited; only with the CSRF token', async () => {
    const webToken = (await signIn(web, 'openid tools:read')).access_token;
    // the agent's own sign-in, with a refresh token
    const own = await signIn(agent, 'openid offline_access tools:read tools:write');
    expect(own.refresh_token).toEqual(expect.any(String));
    const fromWeb = (await exchange(webToken)).access_token;
    const fromOwn = (await exchange(own.access_token, 'tools:read')).access_token;
    expect(await atResource(fromWeb)).toMatchObject({ active: true, act: { sub: agent.app_id } });
    expect((await atAgent(fromOwn)).active).toBe(true);

    const { browser, page } = await onAccountPage();
    expect(listed(page.text)).toEqual([agent.app_id]);
    const forged = await browser.post('/account/agents/end').type('form').send({ agent_id: agent.app_id });
    expect(forged.status).toBe(403);
    expect((await atResource(fromWeb)).active).toBe(true);

    // someone else cannot end it for this person
    const other = await createUser(h);
    const theirs = await onAccountPage(other);
    const notTheirs = await theirs.browser
      .post('/account/agents/end')
      .type('form')
      .send({ csrf: hidden(theirs.page.text, 'csrf'), agent_id: agent.app_id });
    expect(notTheirs.status).toBe(404);
    expect(notTheirs.text).toContain('That agent does not act for you.');
    expect((await atResource(fromWeb)).active).toBe(true);

    const ended = await browser
      .post('/account/agents/end')
      .type('form')
      .send({ csrf: hidden(page.text, 'csrf'), agent_id: agent.app_id });
    expect(ended.status).toBe(303);
    expect(ended.headers.location).toBe('/account?notice=agent-ended');
    const after = await browser.get(ended.headers.location as string).expect(200);
    expect(after.text).toContain('Agent ended: it no longer acts for you.');
    expect(listed(after.text)).toEqual([]);

    // the next use of its tokens fails: the resource server's and the agent's introspection, its refresh token
    expect(await atResource(fromWeb)).toEqual({ active: false });
    expect(await atResource(fromOwn)).toEqual({ active: false });
    expect(await atAgent(fromOwn)).toEqual({ active: false });
    expect(await oauthError(oidc.refreshTokenGrant(await configFor(agent), own.refresh_token!))).toBe('invalid_grant');
    // and no token the person gave before the end can be exchanged by it again
    expect(await oauthError(exchange(webToken))).toBe('invalid_grant');
    expect(await oauthError(exchange(own.access_token))).toBe('invalid_grant');
    // the web shop's own token is the person's, not the agent's: it still works
    expect((await atResource(webToken)).active).toBe(true);

    const [row] = await h.storage.db.query<{ ended_at: Date | null }>(
      'SELECT ended_at FROM delegations WHERE user_id = $1 AND agent_id = $2',
      [user.user_id, agent.app_id],
    );
    expect(row.ended_at).toBeInstanceOf(Date);
    const events = (await h.ctx.kernel.audit.list({ types: ['delegation.ended'], limit: 100 })).filter(
      (e) => e.subject === user.user_id,
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actorType: 'user', actor: user.user_id, detail: { agent_id: agent.app_id } });
    expect(events[0].detail.resources).toEqual([TOOLS]);
    const ending = await browser
      .post('/account/agents/end')
      .type('form')
      .send({ csrf: hidden(after.text, 'csrf'), agent_id: agent.app_id });
    expect(ending.status).toBe(404);

    // a token the person gives later lets the agent act again, listed afresh
    clock += 2000;
    const later = (await signIn(web, 'openid tools:read')).access_token;
    const resumed = await exchange(later);
    expect(await atResource(resumed.access_token)).toMatchObject({ active: true, act: { sub: agent.app_id } });
    expect(listed((await browser.get('/account').expect(200)).text)).toEqual([agent.app_id]);
  });

  it('an ended agent takes nothing the person gave before the end, not even through another agent', async () => {
    const webToken = (await signIn(web, 'openid tools:read')).access_token;
    await exchange(webToken);
    await endAgent(agent.app_id);
    clock += 2000;
    // the relay exchanges the same token after the end: its own delegation is not ended
    const viaRelay = (await te().exchange(relay, webToken)).access_token;
    expect((await atResource(viaRelay)).active).toBe(true);
    // but the travel agent cannot take the person's older token through it
    expect(await oauthError(exchange(viaRelay))).toBe('invalid_grant');
    // a token the person gives later lets it act again, through the relay too
    const later = (await signIn(web, 'openid tools:read')).access_token;
    const relayed = (await te().exchange(relay, later)).access_token;
    expect(await atResource((await exchange(relayed)).access_token)).toMatchObject({
      active: true,
      act: { sub: agent.app_id, act: { sub: relay.app_id } },
    });
  });

  it('a delegated token never outlives what it came from: the agents before it, the app and token it was exchanged from', async () => {
    const relayExchange = (subjectToken: string) => te().exchange(relay, subjectToken);
    // a chain: the web shop's token → the travel agent → the relay; the person ends the travel agent
    const webToken = (await signIn(web, 'openid tools:read')).access_token;
    const first = (await exchange(webToken)).access_token;
    const second = (await relayExchange(first)).access_token;
    expect(await atResource(second)).toMatchObject({
      active: true,
      act: { sub: relay.app_id, act: { sub: agent.app_id } },
    });
    const browser = await endAgent(agent.app_id);
    expect(await atResource(first)).toEqual({ active: false });
    expect(await atResource(second)).toEqual({ active: false });
    expect(await oauthError(relayExchange(second))).toBe('invalid_grant');
    // the relay's own delegation from the web shop's token is not the travel agent's: it still acts
    const direct = (await relayExchange(webToken)).access_token;
    expect((await atResource(direct)).active).toBe(true);

    // the web shop revokes the token it got (RFC 7009): what the relay got from it stops, and is not exchanged again
    clock += 2000;
    const revoked = (await signIn(web, 'openid tools:read')).access_token;
    const fromRevoked = (await relayExchange(revoked)).access_token;
    const again = (await relayExchange(fromRevoked)).access_token;
    expect((await atResource(again)).active).toBe(true);
    await request(h.publicApp)
      .post('/revoke')
      .auth(web.app_id, web.client_secret)
      .type('form')
      .send({ token: revoked })
      .expect(200);
    expect(await atResource(fromRevoked)).toEqual({ active: false });
    expect(await atResource(again)).toEqual({ active: false });
    expect(await oauthError(relayExchange(fromRevoked))).toBe('invalid_grant');

    // the person withdraws the web shop's access: the relay's tokens from the shop's tokens stop with it
    clock += 2000;
    const shopToken = (await signIn(web, 'openid tools:read')).access_token;
    const fromShop = (await relayExchange(shopToken)).access_token;
    expect((await atResource(fromShop)).active).toBe(true);
    const account = await browser.get('/account').expect(200);
    await browser
      .post('/account/consents/withdraw')
      .type('form')
      .send({ csrf: hidden(account.text, 'csrf'), app_id: web.app_id })
      .expect(303);
    expect(await atResource(fromShop)).toEqual({ active: false });
    expect(await atResource(direct)).toEqual({ active: false });
    expect(await oauthError(relayExchange(fromShop))).toBe('invalid_grant');
  });
});
