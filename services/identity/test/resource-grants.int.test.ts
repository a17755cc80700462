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

type Client = { app_id: string; client_secret: string };
type Resource = { resource_id: string; uri: string; introspection_secret: string };

const TOOLS = 'https://tools.example.com/mcp';
const AGAIN = 'https://again.example.com/mcp';

/**
 * A security review of issue 41's resource-bound tokens: a resource's token and refresh token hold only while
 * the person's consent covers the resource and each of its scopes (as the consent page records them:
 * `<uri>`, `<uri>#<scope>`), and only for the resource they were issued to: one deleted and registered again
 * with the same uri takes none of the old one's tokens.
 */
describe('resource grants: consent and the resource’s identity (security review)', () => {
  let h: IdentityHarness;
  let app: Client;
  let user: { username: string; password: string; user_id: string };
  let tools: Resource;

  const admin = (method: 'post' | 'get' | 'delete', path: string) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h);
    user = await createUser(h);
    tools = (
      await admin('post', '/admin/resources')
        .send({ uri: TOOLS, name: 'Tools', scopes: ['tools:read', 'tools:write'] })
        .expect(201)
    ).body;
  });
  afterAll(() => h.close());

  /** A person's tokens for `resource` through the code flow: the access token and the refresh token. */
  async function codeFor(resource: string, scope: string): Promise<string> {
    const query = {
      response_type: 'code',
      client_id: app.app_id,
      redirect_uri: REDIRECT_URI,
      scope: `openid offline_access ${scope}`,
      state: 'st',
      resource,
    };
    return callbackParams(await browserFlow(request.agent(h.publicApp), query, user)).code;
  }
  const exchange = (code: string) =>
    request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
  async function tokensFor(resource: string, scope: string): Promise<{ access: string; refresh: string }> {
    const res = await exchange(await codeFor(resource, scope)).expect(200);
    expect(res.body.refresh_token).toMatch(/^[0-9a-f]{64}$/);
    return { access: res.body.access_token as string, refresh: res.body.refresh_token as string };
  }
  const introspectAs = (r: Resource, token: string) =>
    request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(r.resource_id, r.introspection_secret))
      .type('form')
      .send({ token });
  const refresh = (token: string) =>
    request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: token });
  /** The person's consent to the app as stored, with `dropped` taken out (the app's sign-in kept). */
  async function consentWithout(dropped: string): Promise<string[]> {
    await h.storage.db.query(
      'UPDATE consents SET scopes = array_remove(scopes, $3) WHERE user_id = $1 AND app_id = $2',
      [user.user_id, app.app_id, dropped],
    );
    await h.ctx.kernel.consents.forget(user.user_id, [app.app_id]);
    return [...(await h.ctx.kernel.consents.find(user.user_id, app.app_id))];
  }

  it('a consent that no longer covers a scope of the resource, or the resource, ends its tokens and refresh tokens; the app’s sign-in stays', async () => {
    for (const dropped of [`${TOOLS}#tools:write`, TOOLS]) {
      const { access, refresh: refreshToken } = await tokensFor(TOOLS, 'tools:read tools:write');
      expect((await introspectAs(tools, access).expect(200)).body).toMatchObject({
        active: true,
        aud: TOOLS,
        scope: 'tools:read tools:write',
      });
      const granted = await consentWithout(dropped);
      expect(granted).toContain('openid');
      expect(granted).not.toContain(dropped);
      // the resource server is told the token no longer holds; the refresh token is refused
      expect((await introspectAs(tools, access).expect(200)).body).toEqual({ active: false });
      const refused = await refresh(refreshToken);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'invalid_grant', attribute: 'refresh_token' });
      expect(refused.body.access_token).toBeUndefined();
    }
    // approved again through the consent page: new tokens work
    const again = await tokensFor(TOOLS, 'tools:read tools:write');
    expect((await introspectAs(tools, again.access).expect(200)).body.active).toBe(true);
    const refreshed = await refresh(again.refresh).expect(200);
    expect((await introspectAs(tools, refreshed.body.access_token).expect(200)).body.active).toBe(true);
  });

  it('a resource deleted and registered again with the same uri takes none of the old one’s tokens: the access token is inactive, the refresh token and a code approved before refused', async () => {
    const created = () =>
      admin('post', '/admin/resources')
        .send({ uri: AGAIN, name: 'Again', scopes: ['again:use'] })
        .expect(201);
    const first: Resource = (await created()).body;
    const old = await tokensFor(AGAIN, 'again:use');
    expect((await introspectAs(first, old.access).expect(200)).body.active).toBe(true);

    await admin('delete', `/admin/resources/${first.resource_id}`).expect(204);
    const second: Resource = (await created()).body;
    expect(second.resource_id).not.toBe(first.resource_id);
    expect((await introspectAs(second, old.access).expect(200)).body).toEqual({ active: false });
    const refused = await refresh(old.refresh);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_grant', attribute: 'refresh_token' });

    // a code approved for the old one (exchanged after) gives no token either
    const third = await (async () => {
      const code = await codeFor(AGAIN, 'again:use');
      await admin('delete', `/admin/resources/${second.resource_id}`).expect(204);
      const registered: Resource = (await created()).body;
      const answer = await exchange(code);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ error: 'invalid_grant', attribute: 'resource' });
      expect(answer.body.access_token).toBeUndefined();
      return registered;
    })();

    // nor did the person's consent to the old one carry over: the consent keeps only the other entries
    const granted = await h.ctx.kernel.consents.find(user.user_id, app.app_id);
    expect(granted).toEqual(expect.arrayContaining(['openid', TOOLS]));
    expect(granted.filter((s) => s === AGAIN || s.startsWith(`${AGAIN}#`))).toEqual([]);
    const [stored] = await h.storage.db.query<{ scopes: string[] }>(
      'SELECT scopes FROM consents WHERE user_id = $1 AND app_id = $2',
      [user.user_id, app.app_id],
    );
    expect(stored.scopes.filter((s) => s.startsWith(AGAIN))).toEqual([]);

    // the resource registered again works for tokens issued to it
    const fresh = await tokensFor(AGAIN, 'again:use');
    expect((await introspectAs(third, fresh.access).expect(200)).body).toMatchObject({ active: true, aud: AGAIN });
    const refreshed = await refresh(fresh.refresh).expect(200);
    expect((await introspectAs(third, refreshed.body.access_token).expect(200)).body.active).toBe(true);
  });
});
