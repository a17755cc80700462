import type { Server } from 'node:http';
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

/**
 * Token exchanges sent in parallel (issue 42): each is answered on its own, and what they write together (the
 * person's row of the agent, the audit trail) is what they would have written one after the other; an end of
 * the agent while exchanges are under way leaves it ended, with no token of theirs still acting.
 */
describe('token exchange (RFC 8693) under concurrent requests', () => {
  let oidc: OpenIdClient;
  let jose: Jose;
  let h: IdentityHarness;
  let server: Server;
  let issuer: string;
  let web: Client;
  let agent: Client;
  let tools: Resource;
  let user: { username: string; password: string; user_id: string };

  const admin = (path: string) => request(h.adminApp).post(path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
  const te = () => delegationClient(oidc, () => ({ h, issuer, user }));
  /** One exchange as the agent sends it (raw, so that parallel ones are parallel requests). */
  const exchange = (subjectToken: string, scope: string) =>
    request(h.publicApp)
      .post('/token')
      .type('form')
      .set('Authorization', basic(agent.app_id, agent.client_secret))
      .send({ grant_type: TOKEN_EXCHANGE, subject_token: subjectToken, subject_token_type: ACCESS_TOKEN, scope });
  const atResource = async (token: string) =>
    (await te().introspectAs(tools.resource_id, tools.introspection_secret, token).expect(200)).body as Record<
      string,
      unknown
    >;
  const row = async () =>
    (
      await h.storage.db.query<{ resources: string[]; scopes: string[]; ended_at: Date | null }>(
        'SELECT resources, scopes, ended_at FROM delegations WHERE user_id = $1 AND agent_id = $2',
        [user.user_id, agent.app_id],
      )
    )[0];
  const exchangedEvents = async () =>
    (await h.ctx.kernel.audit.list({ types: ['delegation.exchanged'], limit: 1000 })).filter(
      (e) => e.detail.agent_id === agent.app_id,
    );

  beforeAll(async () => {
    oidc = await import('openid-client');
    jose = await import('jose');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: issuer, TOKEN_EXCHANGE_TTL_SECONDS: '600' });
    await new Promise<void>((resolve) => {
      server = h.publicApp.listen(port, '127.0.0.1', () => resolve());
    });
    const newApp = async (name: string, extra: Record<string, unknown> = {}) =>
      (
        await admin('/admin/apps')
          .send({ name, redirect_uris: [REDIRECT_URI], ...extra })
          .expect(201)
      ).body as Client;
    web = await newApp('Web');
    agent = await newApp('Travel agent', { may_act_for_users: true });
    tools = (
      await admin('/admin/resources')
        .send({ uri: TOOLS, name: 'Tools', scopes: ['tools:read', 'tools:write'] })
        .expect(201)
    ).body as Resource;
  });
  // a person of their own for each test: the agent's row and events are that test's alone
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

  it('eight parallel exchanges: each answered with its own token; one row with all they asked; one audit event each', async () => {
    const subjectToken = (await te().signIn(web, 'openid tools:read tools:write')).access_token;
    const scopes = ['tools:read', 'tools:write', 'tools:read tools:write', 'tools:read'];
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => exchange(subjectToken, scopes[i % 4])));
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 8 }, () => 200));
    expect(answers.map((a) => a.body.scope)).toEqual([...scopes, ...scopes]);
    const claims = answers.map((a) => jose.decodeJwt(a.body.access_token as string));
    const jtis = claims.map((c) => c.jti);
    expect(new Set(jtis).size).toBe(8);
    expect(claims.every((c) => (c.act as { sub?: string })?.sub === agent.app_id && c.aud === TOOLS)).toBe(true);
    for (const a of answers) expect(await atResource(a.body.access_token as string)).toMatchObject({ active: true });

    // the row of the person and the agent: one, active, with every scope any of them was given
    expect(await row()).toEqual({
      resources: [TOOLS],
      scopes: [`${TOOLS}#tools:read`, `${TOOLS}#tools:write`],
      ended_at: null,
    });
    // audited once per token (recorded together: the audit trail's group commit), none lost, none twice
    const events = (await exchangedEvents()).filter((e) => jtis.includes(e.detail.token_id as string));
    expect(events.map((e) => e.detail.token_id).sort()).toEqual([...jtis].sort());
    expect(events.every((e) => e.actorType === 'app' && e.actor === agent.app_id)).toBe(true);
    // each with the scope of its own token
    for (const [i, jti] of jtis.entries())
      expect(events.find((e) => e.detail.token_id === jti)?.detail.scope).toBe(scopes[i % 4]);
  });

  it('the person ends the agent while exchanges are under way: it stays ended, and no token they got still acts', async () => {
    const subjectToken = (await te().signIn(web, 'openid tools:read tools:write')).access_token;
    // the agent acts for the person once (its row), then eight more exchanges race the end
    const first = await exchange(subjectToken, 'tools:read').expect(200);
    // (a supertest request starts when it is awaited: then() sends each at once)
    const racing = Array.from({ length: 8 }, () => exchange(subjectToken, 'tools:read').then((r) => r));
    await new Promise((resolve) => setImmediate(resolve));
    const ended = h.ctx.delegation.delegations.end(user.user_id, agent.app_id, { type: 'user', id: user.user_id });
    const answers = await Promise.all(racing);
    expect(await ended).toBe(true);

    // each answered the token, or refused it (the end came first), in OAuth terms
    for (const a of answers) {
      if (a.status !== 200) {
        expect(a.status).toBe(400);
        expect(a.body.error).toBe('invalid_grant');
      }
    }
    expect((await row())?.ended_at).toBeInstanceOf(Date);
    const issued = [first, ...answers.filter((a) => a.status === 200)].map((a) => a.body.access_token as string);
    for (const token of issued) expect(await atResource(token)).toEqual({ active: false });
    // the person's token, issued before the end, can no longer be exchanged by the agent
    const again = await exchange(subjectToken, 'tools:read').expect(400);
    expect(again.body.error).toBe('invalid_grant');
    expect((await row())?.ended_at).toBeInstanceOf(Date);
    const ends = (await h.ctx.kernel.audit.list({ types: ['delegation.ended'], limit: 100 })).filter(
      (e) => e.subject === user.user_id,
    );
    expect(ends).toHaveLength(1);
  });
});
