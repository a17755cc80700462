import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { freePort } from '@attest/testing';
import { SUBSCRIBABLE_EVENT_TYPES } from '@attest/common';
import {
  generatePrivateKey,
  postTransaction,
  privateKeyToAccount,
  receiveAt,
  transactionsHarness,
  type TransactionsHarness,
} from '../../transactions/test/support';
import { eventually, WebhookReceiver } from '../../transactions/test/support/webhook-receiver';
import {
  ADMIN_TOKEN,
  browserFlow,
  createApp,
  createUser,
  hidden,
  identityHarness,
  type IdentityHarness,
} from './support';

/**
 * The developer portal (issue 27) through its HTTP surface: sign-in with the provider itself (the portal's
 * /authorize and /token), the apps a person belongs to and nothing else, every change checked against the
 * person's role on the server, audited under their name, CSRF on every form; API keys through the
 * transactions admin API.
 */
type Agent = ReturnType<typeof request.agent>;
type Person = { username: string; password: string; user_id: string };

const listen = (app: http.RequestListener, port = 0) =>
  new Promise<http.Server>((resolve) => {
    const server = http.createServer(app).listen(port, '127.0.0.1', () => resolve(server));
  });
const supertestPost = (h: TransactionsHarness, apiKey: string, path: string, body: object) =>
  request(h.publicApp).post(path).set('Authorization', `Bearer ${apiKey}`).send(body);
const close = (server: http.Server) => new Promise<void>((r) => server.close(() => r()));
/** A value shown once (issue 40, item 13): the whole of it, in its <output>. */
const shownOnceIn = (text: string, id: string) =>
  new RegExp(`<output id="${id}"[^>]*>([^<]+)</output>`).exec(text)?.[1];

describe('developer portal', () => {
  let h: IdentityHarness;
  let tx: TransactionsHarness;
  let servers: http.Server[];
  let shop: { app_id: string; client_secret: string };
  let other: { app_id: string; client_secret: string };
  let owner: Person;
  let developer: Person;
  let viewer: Person;
  let outsider: Person;
  let receiver: WebhookReceiver;

  const admin = (method: 'get' | 'put' | 'delete' | 'post', route: string) =>
    request(h.adminApp)[method](`/admin${route}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
  const addMember = async (appId: string, username: string, role: string) => {
    const res = await admin('put', `/apps/${appId}/members`).send({ username, role });
    expect([200, 201]).toContain(res.status);
  };

  /** Signs a person in to the portal, as a browser does: /portal/signin → /authorize → sign-in, consent → /portal/callback. */
  async function signIn(person: Person): Promise<Agent> {
    const agent = request.agent(h.publicApp);
    const start = await agent.get('/portal/signin');
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.location as string, 'http://localhost:4000');
    expect(authorize.pathname).toBe('/authorize');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('client_id')).toBe(h.ctx.portal.clientId);
    const back = await browserFlow(agent, Object.fromEntries(authorize.searchParams), person);
    const callback = new URL(back.headers.location as string);
    expect(callback.pathname).toBe('/portal/callback');
    const done = await agent.get(`/portal/callback${callback.search}`);
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe('/portal');
    return agent;
  }
  const csrfOf = async (agent: Agent, path: string) => hidden((await agent.get(path)).text, 'csrf');

  beforeAll(async () => {
    tx = await transactionsHarness({ WEBHOOK_POLL_INTERVAL_MS: '100', WEBHOOK_ALLOW_PRIVATE: 'true' });
    receiver = await new WebhookReceiver().start();
    const txServer = await listen(tx.adminApp);
    const port = await freePort();
    h = await identityHarness({
      PORTAL_INTERNAL_URL: `http://127.0.0.1:${port}`,
      TRANSACTIONS_ADMIN_URL: `http://127.0.0.1:${(txServer.address() as AddressInfo).port}`,
      TRANSACTIONS_ADMIN_TOKEN: ADMIN_TOKEN,
      PORTAL_SELF_SERVICE_APPS: 'true',
    });
    servers = [txServer, await listen(h.publicApp, port)];
    shop = await createApp(h, ['http://localhost:3000/callback'], 'My shop');
    other = await createApp(h, ['http://localhost:3001/callback'], 'Someone else’s app');
    [owner, developer, viewer, outsider] = await Promise.all([
      createUser(h),
      createUser(h),
      createUser(h),
      createUser(h),
    ]);
    await addMember(shop.app_id, owner.username, 'owner');
    await addMember(shop.app_id, developer.username, 'developer');
    await addMember(shop.app_id, viewer.username, 'viewer');
    await addMember(other.app_id, outsider.username, 'owner');
  });
  afterAll(async () => {
    await Promise.all(servers.map(close));
    await receiver.stop();
    await h.close();
    await tx.close();
  });

  it('is an app of the provider itself, and a signed-out visitor only sees “Sign in with Attest”', async () => {
    const portalApp = await h.ctx.kernel.apps.find(h.ctx.portal.clientId);
    expect(portalApp).toMatchObject({ public: true, redirectUris: ['http://localhost:4000/portal/callback'] });
    const res = await request(h.publicApp).get('/portal');
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain("script-src 'none'");
    expect(res.text).toContain('Sign in with Attest');
    expect(res.text).not.toContain(shop.app_id);
    const page = await request(h.publicApp).get(`/portal/apps/${shop.app_id}`);
    expect(page.status).toBe(302);
    expect(page.headers.location).toBe('/portal');
  });

  it('signs in through /authorize and /token and sets a portal cookie of its own', async () => {
    const agent = await signIn(owner);
    const res = await agent.get('/portal');
    expect(res.status).toBe(200);
    expect(res.text).toContain(`id="portal-username">${owner.username}<`);
    expect(res.text).toContain(`data-app="${shop.app_id}"`);
    expect(res.text).not.toContain(other.app_id);
    // the sign-in left the provider's session and the portal's, apart
    const audit = await h.ctx.kernel.audit.list({ types: ['signin.succeeded'], limit: 50 });
    expect(audit.some((e) => e.actor === owner.user_id && e.detail.app_id === h.ctx.portal.clientId)).toBe(true);
  });

  it('refuses a callback this browser did not start', async () => {
    const res = await request(h.publicApp).get('/portal/callback?code=abc&state=forged');
    expect(res.status).toBe(400);
    expect(res.text).toContain('did not complete');
    expect(String(res.headers['set-cookie'] ?? '')).not.toMatch(/attest_portal=[0-9a-f]/);
  });

  it('shows a member of another app nothing of this one: 404, the same as no app', async () => {
    const agent = await signIn(outsider);
    const list = await agent.get('/portal');
    expect(list.text).toContain(other.app_id);
    expect(list.text).not.toContain(shop.app_id);
    for (const path of [
      `/portal/apps/${shop.app_id}`,
      `/portal/apps/${shop.app_id}/keys`,
      `/portal/apps/${shop.app_id}/insight`,
    ]) {
      const res = await agent.get(path);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain('My shop');
    }
    const csrf = await csrfOf(agent, '/portal');
    const change = await agent
      .post(`/portal/apps/${shop.app_id}/settings`)
      .type('form')
      .send({ csrf, name: 'Taken over', redirect_uris: 'https://evil.example/cb' });
    expect(change.status).toBe(404);
    expect((await h.ctx.kernel.apps.find(shop.app_id))?.name).toBe('My shop');
    expect((await agent.get('/portal/apps/app_00000000000000000000000000000000')).status).toBe(404);
  });

  it('lets an owner add a redirect URI, audited under their name', async () => {
    const agent = await signIn(owner);
    const page = await agent.get(`/portal/apps/${shop.app_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="your-role">owner<');
    expect(page.text).toContain(`client.discovery(new URL(&#39;http://localhost:4000&#39;), &#39;${shop.app_id}&#39;`);
    const csrf = hidden(page.text, 'csrf');
    const res = await agent.post(`/portal/apps/${shop.app_id}/settings`).type('form').send({
      csrf,
      name: 'My shop',
      redirect_uris: 'http://localhost:3000/callback\nhttps://shop.example.com/callback',
      post_logout_redirect_uris: 'http://localhost:3000/',
      web_origins: '',
      backchannel_logout_uri: '',
      min_verification_level: 'device',
      id_token_signed_response_alg: 'RS256',
      dpop_bound_access_tokens: 'true',
    });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/portal/apps/${shop.app_id}?notice=saved`);
    const app = await h.ctx.kernel.apps.find(shop.app_id);
    expect(app).toMatchObject({
      redirectUris: ['http://localhost:3000/callback', 'https://shop.example.com/callback'],
      postLogoutRedirectUris: ['http://localhost:3000/'],
      minVerificationLevel: 'device',
      dpopBoundAccessTokens: true,
      requirePushedAuthorizationRequests: false,
    });
    const [event] = await h.ctx.kernel.audit.list({ types: ['app.updated'], limit: 1 });
    expect(event).toMatchObject({ actorType: 'user', actor: owner.user_id, subject: shop.app_id });
    expect(event.detail).toMatchObject({ via: 'portal', username: owner.username });
    // a bad value: the page again, naming it, nothing stored
    const bad = await agent
      .post(`/portal/apps/${shop.app_id}/settings`)
      .type('form')
      .send({ csrf, redirect_uris: 'ftp://nope' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('redirect_uris must use https');
    expect((await h.ctx.kernel.apps.find(shop.app_id))?.redirectUris).toHaveLength(2);
  });

  it('puts an app under the FAPI 2.0 profile from the settings form, with its keys URL', async () => {
    const agent = await signIn(owner);
    const created = await admin('post', '/apps').send({
      name: 'High value',
      redirect_uris: ['https://bank.example/cb'],
    });
    expect(created.status).toBe(201);
    const id = created.body.app_id as string;
    await addMember(id, owner.username, 'owner');
    const csrf = await csrfOf(agent, `/portal/apps/${id}`);
    const form = {
      csrf,
      name: 'High value',
      redirect_uris: 'https://bank.example/cb',
      id_token_signed_response_alg: 'RS256',
      profile: 'fapi2',
    };
    // no keys yet: refused, naming them, nothing stored
    const noKeys = await agent.post(`/portal/apps/${id}/settings`).type('form').send(form);
    expect(noKeys.status).toBe(400);
    expect(noKeys.text).toContain('needs its public keys');
    expect((await h.ctx.kernel.apps.find(id))?.profile).toBe('none');
    // unchecked boxes and RS256 do not count against the profile: it sets them
    const res = await agent
      .post(`/portal/apps/${id}/settings`)
      .type('form')
      .send({ ...form, jwks_uri: 'https://bank.example/jwks.json' });
    expect(res.status).toBe(303);
    const app = await h.ctx.kernel.apps.find(id);
    expect(app).toMatchObject({
      profile: 'fapi2',
      jwksUri: 'https://bank.example/jwks.json',
      tokenEndpointAuthMethod: 'private_key_jwt',
      secretHash: null,
      requirePushedAuthorizationRequests: true,
      dpopBoundAccessTokens: true,
      idTokenSignedResponseAlg: 'PS256',
    });
    // the profile is on the app's security page now (issue 40, item 13)
    const page = await agent.get(`/portal/apps/${id}/security`);
    expect(page.text).toMatch(/<option value="fapi2" selected>/);
    const [event] = await h.ctx.kernel.audit.list({ types: ['app.updated'], limit: 1 });
    expect(event).toMatchObject({ actor: owner.user_id, subject: id });
    expect(event.detail).toMatchObject({ via: 'portal', profile: 'fapi2' });
  });

  it('refuses a form without this session’s CSRF token', async () => {
    const agent = await signIn(owner);
    const res = await agent
      .post(`/portal/apps/${shop.app_id}/settings`)
      .type('form')
      .send({ csrf: 'forged', name: 'CSRF’d' });
    expect(res.status).toBe(403);
    const other = await signIn(developer);
    const stolen = await csrfOf(other, '/portal');
    const cross = await agent
      .post(`/portal/apps/${shop.app_id}/settings`)
      .type('form')
      .send({ csrf: stolen, name: 'CSRF’d' });
    expect(cross.status).toBe(403);
    expect((await h.ctx.kernel.apps.find(shop.app_id))?.name).toBe('My shop');
  });

  it('lets a viewer read but change nothing: the server refuses', async () => {
    const agent = await signIn(viewer);
    const page = await agent.get(`/portal/apps/${shop.app_id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="read-only"');
    expect(page.text).not.toContain('id="save-settings"');
    const csrf = hidden(page.text, 'csrf');
    const before = await h.ctx.kernel.apps.find(shop.app_id);
    const attempts: [string, Record<string, string>][] = [
      ['/settings', { name: 'Viewer was here' }],
      ['/rotate-secret', {}],
      ['/disable', {}],
      ['/members', { username: viewer.username, role: 'owner' }],
      ['/keys', { name: 'viewer key' }],
    ];
    for (const [path, form] of attempts) {
      const res = await agent
        .post(`/portal/apps/${shop.app_id}${path}`)
        .type('form')
        .send({ csrf, ...form });
      expect([path, res.status]).toEqual([path, 403]);
    }
    expect(await h.ctx.kernel.apps.find(shop.app_id)).toEqual(before);
    expect(await h.ctx.kernel.teams.roleOf(shop.app_id, viewer.user_id)).toBe('viewer');
    expect((await tx.admin('get', `/apps/${shop.app_id}/api-keys`)).body).toEqual([]);
  });

  it('lets a developer change settings but not the team', async () => {
    const agent = await signIn(developer);
    const csrf = await csrfOf(agent, `/portal/apps/${shop.app_id}`);
    const team = await agent
      .post(`/portal/apps/${shop.app_id}/members`)
      .type('form')
      .send({ csrf, username: developer.username, role: 'owner' });
    expect(team.status).toBe(403);
    expect(await h.ctx.kernel.teams.roleOf(shop.app_id, developer.user_id)).toBe('developer');
    const rotate = await agent.post(`/portal/apps/${shop.app_id}/rotate-secret`).type('form').send({ csrf });
    expect(rotate.status).toBe(200);
    const secret = shownOnceIn(rotate.text, 'client-secret');
    // shown on the security page, where the secret is rotated
    expect(rotate.text).toMatch(/<a href="[^"]+\/security" data-section="security" aria-current="page">/);
    expect(secret).toMatch(/.{20,}/);
    // the old secret stops working, the new one works
    const [event] = await h.ctx.kernel.audit.list({ types: ['app.secret_rotated'], limit: 1 });
    expect(event).toMatchObject({ actor: developer.user_id, subject: shop.app_id });
    expect((await agent.get(`/portal/apps/${shop.app_id}`)).text).not.toContain(secret!);
  });

  it('creates an API key shown once, lists it with its last use, and revokes only this app’s keys', async () => {
    const agent = await signIn(developer);
    const empty = await agent.get(`/portal/apps/${shop.app_id}/keys`);
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('id="no-keys"');
    const csrf = hidden(empty.text, 'csrf');
    const created = await agent
      .post(`/portal/apps/${shop.app_id}/keys`)
      .type('form')
      .send({ csrf, name: 'shop-backend' });
    expect(created.status).toBe(200);
    const key = shownOnceIn(created.text, 'new-api-key');
    expect(key).toBeDefined();
    const listed = (await tx.admin('get', `/apps/${shop.app_id}/api-keys`)).body as { key_id: string; name: string }[];
    expect(listed).toEqual([expect.objectContaining({ name: 'shop-backend' })]);
    const again = await agent.get(`/portal/apps/${shop.app_id}/keys`);
    expect(again.text).toContain('shop-backend');
    expect(again.text).not.toContain(key!);
    const [event] = await h.ctx.kernel.audit.list({ types: ['api_key.created'], limit: 1 });
    expect(event).toMatchObject({ actor: developer.user_id, subject: listed[0].key_id });
    expect(event.detail).toMatchObject({ app_id: shop.app_id, username: developer.username });
    // a key of another app cannot be revoked from this one
    const foreign = (await tx.admin('post', `/apps/${other.app_id}/api-keys`).send({ name: 'theirs' })).body as {
      key_id: string;
    };
    const refused = await agent
      .post(`/portal/apps/${shop.app_id}/keys/revoke`)
      .type('form')
      .send({ csrf, key_id: foreign.key_id });
    expect(refused.status).toBe(404);
    const theirs = (await tx.admin('get', `/apps/${other.app_id}/api-keys`)).body as { revoked_at: string | null }[];
    expect(theirs[0].revoked_at).toBeNull();
    const revoked = await agent
      .post(`/portal/apps/${shop.app_id}/keys/revoke`)
      .type('form')
      .send({ csrf, key_id: listed[0].key_id });
    expect(revoked.status).toBe(303);
    const after = (await tx.admin('get', `/apps/${shop.app_id}/api-keys`)).body as { revoked_at: string | null }[];
    expect(after[0].revoked_at).not.toBeNull();
  });

  it('lets an owner add a receiving address by signing its challenge, and remove it; audited; others only read (issue 40, item 1)', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const address = wallet.address.toLowerCase();
    const base = `/portal/apps/${shop.app_id}/addresses`;
    const agent = await signIn(owner);
    const empty = await agent.get(base);
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('id="no-addresses"');
    expect(empty.text).toContain(`href="${base}"`);
    const csrf = hidden(empty.text, 'csrf');
    const ask = async () => {
      const page = await agent.post(`${base}/challenge`).type('form').send({ csrf, chain: 'worldchain', address });
      expect(page.status).toBe(200);
      const message = /<textarea id="challenge-message"[^>]*>([^<]*)<\/textarea>/.exec(page.text)?.[1];
      expect(message).toContain(`I hold ${address} and receive payments at it for app ${shop.app_id} on worldchain.`);
      return { challengeId: hidden(page.text, 'challenge_id'), message: message! };
    };
    // a signature by another key is refused, and adds nothing
    const first = await ask();
    const stranger = privateKeyToAccount(generatePrivateKey());
    const wrong = await agent
      .post(base)
      .type('form')
      .send({
        csrf,
        challenge_id: first.challengeId,
        signature: await stranger.signMessage({ message: first.message }),
      });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('id="portal-error"');
    expect((await tx.admin('get', `/apps/${shop.app_id}/receiving-addresses`)).body).toEqual([]);
    // the address's own signature adds it
    const second = await ask();
    const added = await agent
      .post(base)
      .type('form')
      .send({
        csrf,
        challenge_id: second.challengeId,
        signature: await wallet.signMessage({ message: second.message }),
      });
    expect(added.status).toBe(200);
    expect(added.text).toContain(`data-address="${address}"`);
    expect((await tx.admin('get', `/apps/${shop.app_id}/receiving-addresses`)).body).toEqual([
      expect.objectContaining({ app_id: shop.app_id, chain: 'worldchain', address, proof: 'eip191' }),
    ]);
    const [event] = await h.ctx.kernel.audit.list({ types: ['receiving_address.added'], limit: 1 });
    expect(event).toMatchObject({ actor: owner.user_id, subject: shop.app_id });
    expect(event.detail).toMatchObject({ via: 'portal', username: owner.username, address, proof: 'eip191' });
    // the same challenge cannot be used again
    const reused = await agent
      .post(base)
      .type('form')
      .send({
        csrf,
        challenge_id: second.challengeId,
        signature: await wallet.signMessage({ message: second.message }),
      });
    expect(reused.status).toBe(400);
    // a developer or a viewer reads, and the server refuses their changes
    for (const person of [developer, viewer]) {
      const theirs = await signIn(person);
      const page = await theirs.get(base);
      expect(page.status).toBe(200);
      expect(page.text).toContain(`data-address="${address}"`);
      expect(page.text).toContain('id="read-only"');
      const theirCsrf = hidden(page.text, 'csrf');
      const refused = await theirs
        .post(`${base}/remove`)
        .type('form')
        .send({ csrf: theirCsrf, chain: 'worldchain', address });
      expect(refused.status).toBe(403);
    }
    const removed = await agent.post(`${base}/remove`).type('form').send({ csrf, chain: 'worldchain', address });
    expect(removed.status).toBe(200);
    expect(removed.text).toContain('id="no-addresses"');
    expect((await tx.admin('get', `/apps/${shop.app_id}/receiving-addresses`)).body).toEqual([]);
    const [gone] = await h.ctx.kernel.audit.list({ types: ['receiving_address.removed'], limit: 1 });
    expect(gone).toMatchObject({ actor: owner.user_id, subject: shop.app_id });
  });

  it('lets an owner read and set the app’s payment policy; a refused field is named on the page; audited; others only read (issue 44)', async () => {
    const base = `/portal/apps/${shop.app_id}/payment-policy`;
    const agent = await signIn(owner);
    const shown = await agent.get(base);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain(`href="${base}" aria-current="page"`);
    expect(shown.text).toMatch(/id="policy-underpayment-tolerance-percent"[^>]*value="0"/);
    expect(shown.text).toMatch(/id="policy-default-expires-in"[^>]*value="900"/);
    const csrf = hidden(shown.text, 'csrf');
    const form = {
      csrf,
      underpayment_tolerance_percent: '2.5',
      flag_overpayment: 'false',
      default_expires_in: '1800',
      display_name: 'Alice’s shop',
      return_origins: 'https://shop.example\r\nhttps://shop.example:8443\r\n',
    };
    const saved = await agent.post(base).type('form').send(form);
    expect(saved.status).toBe(200);
    expect(saved.text).toContain('Payment policy saved');
    expect(saved.text).toMatch(/id="policy-underpayment-tolerance-percent"[^>]*value="2.5"/);
    expect((await tx.admin('get', `/apps/${shop.app_id}/payment-policy`)).body).toEqual({
      app_id: shop.app_id,
      underpayment_tolerance_percent: '2.5',
      flag_overpayment: false,
      default_expires_in: 1800,
      display_name: 'Alice’s shop',
      return_origins: ['https://shop.example', 'https://shop.example:8443'],
    });
    const [event] = await h.ctx.kernel.audit.list({ types: ['payment_policy.changed'], limit: 1 });
    expect(event).toMatchObject({ actor: owner.user_id, subject: shop.app_id });
    expect(event.detail).toMatchObject({
      via: 'portal',
      username: owner.username,
      underpayment_tolerance_percent: '2.5',
    });

    // a value the service refuses: 400, the field named and marked, what was typed kept, nothing changed
    const refused = await agent
      .post(base)
      .type('form')
      .send({ ...form, underpayment_tolerance_percent: '75', display_name: 'Changed' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('id="portal-error"');
    expect(refused.text).toContain('underpayment_tolerance_percent must be a number from 0 to 50');
    expect(refused.text).toMatch(/id="policy-underpayment-tolerance-percent"[^>]*value="75"[^>]*aria-invalid="true"/);
    const origins = await agent
      .post(base)
      .type('form')
      .send({ ...form, return_origins: 'http://shop.example' });
    expect(origins.status).toBe(400);
    expect(origins.text).toContain('return_origins must list https origins');
    expect((await tx.admin('get', `/apps/${shop.app_id}/payment-policy`)).body).toMatchObject({
      underpayment_tolerance_percent: '2.5',
      display_name: 'Alice’s shop',
    });
    // without the session's CSRF token nothing is set
    const forged = await agent
      .post(base)
      .type('form')
      .send({ ...form, csrf: 'forged', default_expires_in: '60' });
    expect(forged.status).toBe(403);
    expect((await tx.admin('get', `/apps/${shop.app_id}/payment-policy`)).body).toMatchObject({
      default_expires_in: 1800,
    });

    // a developer or a viewer reads it, and the server refuses their change
    for (const person of [developer, viewer]) {
      const theirs = await signIn(person);
      const page = await theirs.get(base);
      expect(page.status).toBe(200);
      expect(page.text).toContain('id="policy-values"');
      expect(page.text).toContain('2.5 %');
      expect(page.text).toContain('<code>https://shop.example:8443</code>');
      expect(page.text).toContain('id="read-only"');
      expect(page.text).not.toContain('id="save-policy"');
      const theirCsrf = hidden(page.text, 'csrf');
      const change = await theirs
        .post(base)
        .type('form')
        .send({ ...form, csrf: theirCsrf, default_expires_in: '60' });
      expect(change.status).toBe(403);
    }
    expect((await tx.admin('get', `/apps/${shop.app_id}/payment-policy`)).body).toMatchObject({
      default_expires_in: 1800,
    });
    // an outsider sees nothing of it
    expect((await (await signIn(outsider)).get(base)).status).toBe(404);
  });

  it('lets an owner manage the team, never leaving the app without an owner', async () => {
    const agent = await signIn(owner);
    const csrf = await csrfOf(agent, `/portal/apps/${shop.app_id}`);
    const add = await agent
      .post(`/portal/apps/${shop.app_id}/members`)
      .type('form')
      .send({ csrf, username: outsider.username, role: 'viewer' });
    expect(add.status).toBe(303);
    expect(await h.ctx.kernel.teams.roleOf(shop.app_id, outsider.user_id)).toBe('viewer');
    const unknown = await agent
      .post(`/portal/apps/${shop.app_id}/members`)
      .type('form')
      .send({ csrf, username: 'nobody-here', role: 'viewer' });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('No user is called');
    const demote = await agent
      .post(`/portal/apps/${shop.app_id}/members`)
      .type('form')
      .send({ csrf, username: owner.username, role: 'viewer' });
    expect(demote.status).toBe(409);
    expect(await h.ctx.kernel.teams.roleOf(shop.app_id, owner.user_id)).toBe('owner');
    const remove = await agent
      .post(`/portal/apps/${shop.app_id}/members/remove`)
      .type('form')
      .send({ csrf, user_id: outsider.user_id });
    expect(remove.status).toBe(303);
    expect(await h.ctx.kernel.teams.roleOf(shop.app_id, outsider.user_id)).toBeNull();
    const [event] = await h.ctx.kernel.audit.list({ types: ['app.member_removed'], limit: 1 });
    expect(event).toMatchObject({ actor: owner.user_id, subject: shop.app_id });
    expect(event.detail).toMatchObject({ username: outsider.username, via: 'portal' });
  });

  it('splits an app’s settings into sub-pages, each its URL, its forms landing back on it (issue 40, item 13)', async () => {
    const agent = await signIn(owner);
    const created = await admin('post', '/apps').send({ name: 'Sub-pages', redirect_uris: ['https://sub.example/cb'] });
    expect(created.status).toBe(201);
    const id = created.body.app_id as string;
    await addMember(id, owner.username, 'owner');
    const base = `/portal/apps/${id}`;
    const sections = [
      ['', 'settings', 'action="/portal/apps/' + id + '/settings"'],
      ['/security', 'security', 'action="/portal/apps/' + id + '/security"'],
      ['/agents', 'agents', 'action="/portal/apps/' + id + '/agents"'],
      ['/team', 'team', 'action="/portal/apps/' + id + '/members"'],
      ['/danger-zone', 'danger', 'action="/portal/apps/' + id + '/disable"'],
    ];
    for (const [path, , form] of sections) {
      const page = await agent.get(`${base}${path}`);
      expect([path, page.status]).toEqual([path, 200]);
      // the sub-navigation names every part, this one current
      for (const [other, otherKey] of sections)
        expect(page.text).toContain(
          `<a href="${base}${other}" data-section="${otherKey}"${other === path ? ' aria-current="page"' : ''}>`,
        );
      expect([path, page.text.includes(form)]).toEqual([path, true]);
    }
    const settingsPage = (await agent.get(base)).text;
    expect(settingsPage).toContain('id="redirect_uris"');
    expect(settingsPage).not.toContain('id="profile"');
    expect(settingsPage).not.toContain('id="member-username"');
    const csrf = hidden(settingsPage, 'csrf');

    // the security page's form: back to it, the boxes as ticked
    const security = await agent.post(`${base}/security`).type('form').send({
      csrf,
      min_verification_level: 'orb',
      id_token_signed_response_alg: 'ES256',
      dpop_bound_access_tokens: 'true',
      profile: 'none',
    });
    expect(security.status).toBe(303);
    expect(security.headers.location).toBe(`${base}/security?notice=saved`);
    expect(await h.ctx.kernel.apps.find(id)).toMatchObject({
      minVerificationLevel: 'orb',
      idTokenSignedResponseAlg: 'ES256',
      dpopBoundAccessTokens: true,
      requirePushedAuthorizationRequests: false,
    });
    const shown = (await agent.get(`${base}/security?notice=saved`)).text;
    expect(shown).toContain('id="portal-notice">Settings saved.<');
    expect(shown).toMatch(/id="dpop" name="dpop_bound_access_tokens" value="true" checked/);
    // the settings page's form leaves the security settings as they are (its form has none of them)
    const settings = await agent
      .post(`${base}/settings`)
      .type('form')
      .send({ csrf, name: 'Sub-pages renamed', redirect_uris: 'https://sub.example/cb' });
    expect(settings.status).toBe(303);
    expect(settings.headers.location).toBe(`${base}?notice=saved`);
    expect(await h.ctx.kernel.apps.find(id)).toMatchObject({
      name: 'Sub-pages renamed',
      minVerificationLevel: 'orb',
      dpopBoundAccessTokens: true,
    });
    // a refused value: the security page again, naming it
    const bad = await agent.post(`${base}/security`).type('form').send({ csrf, profile: 'fapi2' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('needs its public keys');
    expect(bad.text).toContain('data-section="security" aria-current="page"');

    // the team page's forms land back on it
    const added = await agent
      .post(`${base}/members`)
      .type('form')
      .send({ csrf, username: outsider.username, role: 'viewer' });
    expect(added.headers.location).toBe(`${base}/team?notice=member-saved`);
    expect((await agent.get(`${base}/team`)).text).toContain(`data-member="${outsider.username}"`);
    const removed = await agent.post(`${base}/members/remove`).type('form').send({ csrf, user_id: outsider.user_id });
    expect(removed.headers.location).toBe(`${base}/team?notice=member-removed`);

    // the danger zone's: disabled, then enabled again
    const off = await agent.post(`${base}/disable`).type('form').send({ csrf });
    expect(off.headers.location).toBe(`${base}/danger-zone?notice=disabled`);
    expect((await h.ctx.kernel.apps.find(id))?.disabledAt).not.toBeNull();
    const zone = (await agent.get(`${base}/danger-zone`)).text;
    expect(zone).toContain('id="enable-app"');
    const on = await agent.post(`${base}/enable`).type('form').send({ csrf });
    expect(on.headers.location).toBe(`${base}/danger-zone?notice=enabled`);
    expect((await h.ctx.kernel.apps.find(id))?.disabledAt).toBeNull();

    // a viewer reads each sub-page, offered no form that changes anything
    await addMember(id, viewer.username, 'viewer');
    const as = await signIn(viewer);
    for (const [path] of sections) {
      const page = await as.get(`${base}${path}`);
      expect([path, page.status]).toEqual([path, 200]);
      expect([
        path,
        /<button type="submit" (class="[^"]*" )?id="(save-|add-member|disable-app|rotate-secret)/.test(page.text),
      ]).toEqual([path, false]);
    }
  });

  it('lets a developer turn the device flow and CIBA on from the agents page, audited; may_act_for_users stays the operator’s', async () => {
    const created = await admin('post', '/apps').send({
      name: 'Agents page',
      redirect_uris: ['https://agents.example/cb'],
    });
    expect(created.status).toBe(201);
    const id = created.body.app_id as string;
    await addMember(id, developer.username, 'developer');
    await addMember(id, viewer.username, 'viewer');
    const base = `/portal/apps/${id}`;
    const agent = await signIn(developer);
    const page = await agent.get(`${base}/agents`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-section="agents" aria-current="page"');
    expect(page.text).toMatch(/<option value="none" selected>Off: no CIBA<\/option>/);
    expect(page.text).not.toMatch(/id="device_flow" name="device_authorization_grant" value="true" checked/);
    // may_act_for_users: shown, read-only, with who sets it
    expect(page.text).toContain('<dd id="may-act-for-users">No</dd>');
    expect(page.text).toContain(
      `Only the operator sets this (<code>pnpm manage app update ${id} --may-act-for-users</code>)`,
    );
    expect(page.text).not.toMatch(/name="may_act_for_users"/);
    const csrf = hidden(page.text, 'csrf');

    // on: the device flow and CIBA poll; a may_act_for_users slipped into the form is not read
    const saved = await agent.post(`${base}/agents`).type('form').send({
      csrf,
      device_authorization_grant: 'true',
      backchannel_token_delivery_mode: 'poll',
      backchannel_client_notification_endpoint: '',
      may_act_for_users: 'true',
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.location).toBe(`${base}/agents?notice=saved`);
    expect(await h.ctx.kernel.apps.find(id)).toMatchObject({
      deviceAuthorizationGrant: true,
      backchannelTokenDeliveryMode: 'poll',
      backchannelClientNotificationEndpoint: null,
      mayActForUsers: false,
    });
    const [event] = await h.ctx.kernel.audit.list({ types: ['app.updated'], limit: 1 });
    expect(event).toMatchObject({ actorType: 'user', actor: developer.user_id, subject: id });
    expect(event.detail).toMatchObject({
      via: 'portal',
      username: developer.username,
      device_authorization_grant: true,
      backchannel_token_delivery_mode: 'poll',
    });
    expect((event.detail as { changed: string[] }).changed).not.toContain('may_act_for_users');
    const shown = (await agent.get(`${base}/agents?notice=saved`)).text;
    expect(shown).toContain('id="portal-notice">Settings saved.<');
    expect(shown).toMatch(/id="device_flow" name="device_authorization_grant" value="true" checked/);
    expect(shown).toMatch(/<option value="poll" selected>/);

    // ping without an endpoint: the page again, naming the field, nothing stored
    const noEndpoint = await agent
      .post(`${base}/agents`)
      .type('form')
      .send({ csrf, device_authorization_grant: 'true', backchannel_token_delivery_mode: 'ping' });
    expect(noEndpoint.status).toBe(400);
    expect(noEndpoint.text).toContain('The ping mode needs backchannel_client_notification_endpoint');
    expect(noEndpoint.text).toContain('data-section="agents" aria-current="page"');
    expect((await h.ctx.kernel.apps.find(id))?.backchannelTokenDeliveryMode).toBe('poll');
    // an endpoint the outbound guard refuses
    const badEndpoint = await agent.post(`${base}/agents`).type('form').send({
      csrf,
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: 'ftp://agents.example/ciba',
    });
    expect(badEndpoint.status).toBe(400);
    expect(badEndpoint.text).toContain('backchannel_client_notification_endpoint');
    expect((await h.ctx.kernel.apps.find(id))?.backchannelClientNotificationEndpoint).toBeNull();
    // an unknown mode: refused by the form, naming it
    const unknown = await agent
      .post(`${base}/agents`)
      .type('form')
      .send({ csrf, backchannel_token_delivery_mode: 'push' });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('backchannel_token_delivery_mode');

    // ping with its endpoint; then everything off again (the box unticked, the mode none)
    const ping = await agent.post(`${base}/agents`).type('form').send({
      csrf,
      device_authorization_grant: 'true',
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: 'https://agents.example/ciba',
    });
    expect(ping.status).toBe(303);
    expect(await h.ctx.kernel.apps.find(id)).toMatchObject({
      backchannelTokenDeliveryMode: 'ping',
      backchannelClientNotificationEndpoint: 'https://agents.example/ciba',
    });
    const off = await agent
      .post(`${base}/agents`)
      .type('form')
      .send({ csrf, backchannel_token_delivery_mode: 'none', backchannel_client_notification_endpoint: '' });
    expect(off.status).toBe(303);
    expect(await h.ctx.kernel.apps.find(id)).toMatchObject({
      deviceAuthorizationGrant: false,
      backchannelTokenDeliveryMode: null,
      backchannelClientNotificationEndpoint: null,
    });

    // the operator's setting shows as it is
    await request(h.adminApp)
      .patch(`/admin/apps/${id}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ may_act_for_users: true })
      .expect(200);
    expect((await agent.get(`${base}/agents`)).text).toContain('<dd id="may-act-for-users">Yes</dd>');

    // a viewer reads the page, offered no form field to change, and the server refuses a change
    const as = await signIn(viewer);
    const read = await as.get(`${base}/agents`);
    expect(read.status).toBe(200);
    expect(read.text).toContain('id="read-only"');
    expect(read.text).not.toContain('id="save-agents"');
    expect(read.text).toMatch(
      /id="ciba_mode" name="backchannel_token_delivery_mode" aria-describedby="ciba-hint" disabled/,
    );
    const before = await h.ctx.kernel.apps.find(id);
    const refused = await as
      .post(`${base}/agents`)
      .type('form')
      .send({
        csrf: hidden(read.text, 'csrf'),
        device_authorization_grant: 'true',
        backchannel_token_delivery_mode: 'poll',
      });
    expect(refused.status).toBe(403);
    expect(await h.ctx.kernel.apps.find(id)).toEqual(before);
  });

  it('offers a public client the device flow but not CIBA (it cannot authenticate at /bc-authorize)', async () => {
    const created = await admin('post', '/apps').send({
      name: 'Public agents page',
      redirect_uris: ['https://public-agents.example/cb'],
      token_endpoint_auth_method: 'none',
    });
    expect(created.status).toBe(201);
    const id = created.body.app_id as string;
    await addMember(id, owner.username, 'owner');
    const agent = await signIn(owner);
    const page = await agent.get(`/portal/apps/${id}/agents`);
    expect(page.text).toContain('id="ciba-public"');
    expect(page.text).not.toContain('name="backchannel_token_delivery_mode"');
    // a mode sent anyway is not read for a public client: the device flow is saved, CIBA stays off
    const saved = await agent
      .post(`/portal/apps/${id}/agents`)
      .type('form')
      .send({
        csrf: hidden(page.text, 'csrf'),
        device_authorization_grant: 'true',
        backchannel_token_delivery_mode: 'poll',
      });
    expect(saved.status).toBe(303);
    expect(await h.ctx.kernel.apps.find(id)).toMatchObject({
      deviceAuthorizationGrant: true,
      backchannelTokenDeliveryMode: null,
    });
  });

  it('creates an app when self-service is on; its creator is its owner and sees the secret once', async () => {
    const agent = await signIn(viewer);
    const csrf = await csrfOf(agent, '/portal');
    const res = await agent
      .post('/portal/apps')
      .type('form')
      .send({ csrf, name: 'Viewer’s own app', redirect_uri: 'https://own.example.com/cb', kind: 'confidential' });
    expect(res.status).toBe(200);
    const appId = /id="client-id">(app_[0-9a-f]{32})</.exec(res.text)?.[1];
    expect(appId).toBeDefined();
    expect(shownOnceIn(res.text, 'client-secret')).toMatch(/.{20,}/);
    expect(await h.ctx.kernel.teams.roleOf(appId!, viewer.user_id)).toBe('owner');
    const [event] = await h.ctx.kernel.audit.list({ types: ['app.created'], limit: 1 });
    expect(event).toMatchObject({ actor: viewer.user_id, subject: appId });
  });

  it('counts sign-ins per day for the insight page, no one named', async () => {
    const agent = await signIn(owner);
    const res = await agent.get(`/portal/apps/${h.ctx.portal.clientId}/insight`);
    expect(res.status).toBe(404); // the portal's own app: nobody's
    const days = await h.ctx.portal.insight.daily(h.ctx.portal.clientId, 30);
    expect(days).toHaveLength(30);
    // this file's sign-ins fall on today (UTC), or on yesterday and today when it runs across midnight
    expect(days[28].signIns + days[29].signIns).toBeGreaterThanOrEqual(5);
    const page = await agent.get(`/portal/apps/${shop.app_id}/insight`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="signins-total">0<');
    expect(page.text).not.toContain(owner.username + '<br>');
  });

  /** The endpoint id on an endpoint page's address: /portal/apps/{app}/webhooks/{wh_…}. */
  const webhookIdIn = (text: string) => /\/webhooks\/(wh_[0-9a-f]{32})"/.exec(text)?.[1];
  const portalEvents = async (type: string) =>
    (await h.ctx.kernel.audit.list({ types: [type], limit: 20 })).filter((e) => e.detail.app_id === shop.app_id);

  it('manages webhooks with the app API’s operations: a filter, the secret once, a test event delivered and logged, audited', async () => {
    const agent = await signIn(developer);
    const empty = await agent.get(`/portal/apps/${shop.app_id}/webhooks`);
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('id="no-webhooks"');
    const csrf = hidden(empty.text, 'csrf');
    // refused by the transactions service: named on the page, nothing stored
    const bad = await agent
      .post(`/portal/apps/${shop.app_id}/webhooks`)
      .type('form')
      .send({ csrf, url: receiver.url, enabled_events: 'nonsense.kind' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('enabled_events');
    expect((await tx.admin('get', `/apps/${shop.app_id}/webhooks`)).body).toEqual([]);

    const added = await agent.post(`/portal/apps/${shop.app_id}/webhooks`).type('form').send({
      csrf,
      url: receiver.url,
      description: 'shop backend',
      enabled_events: 'transaction.*\npayment_request.paid',
    });
    expect(added.status).toBe(200);
    const secret = shownOnceIn(added.text, 'webhook-secret');
    expect(secret).toMatch(/^whsec_/);
    const id = webhookIdIn(added.text)!;
    const stored = (await tx.admin('get', `/apps/${shop.app_id}/webhooks`)).body as { enabled_events: string[] }[];
    expect(stored).toEqual([
      expect.objectContaining({ webhook_id: id, enabled_events: ['transaction.*', 'payment_request.paid'] }),
    ]);
    const page = await agent.get(`/portal/apps/${shop.app_id}/webhooks/${id}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(secret!);
    expect(page.text).toContain('id="no-deliveries"');

    const test = await agent.post(`/portal/apps/${shop.app_id}/webhooks/${id}/test`).type('form').send({ csrf });
    expect(test.status).toBe(303);
    expect(test.headers.location).toBe(`/portal/apps/${shop.app_id}/webhooks/${id}?notice=test-sent`);
    const [got] = await receiver.waitFor(1, (r) => r.body.includes('"webhook.test"'));
    expect(JSON.parse(got.body)).toMatchObject({ type: 'webhook.test', test: true });
    const logged = await eventually(async () => {
      const text = (await agent.get(`/portal/apps/${shop.app_id}/webhooks/${id}`)).text;
      return text.includes('data-status="succeeded"') ? text : undefined;
    });
    expect(logged).toContain('webhook.test');
    // each attempt: when (to the second), the status, how long it took, the body sent and the one answered
    expect(logged).toMatch(
      /<tr data-attempt="1"><td>1<\/td><td><time[^>]*>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC<\/time><\/td><td data-cell="status">200<\/td><td><\/td><td data-cell="duration">\d+ ms<\/td><\/tr>/,
    );
    expect(logged).toContain(`<code>${got.body.replace(/"/g, '&quot;')}</code>`);
    expect(logged).toContain('data-body="empty"');
    expect(logged).not.toContain('webhook-signature:');

    const rotated = await agent
      .post(`/portal/apps/${shop.app_id}/webhooks/${id}/rotate-secret`)
      .type('form')
      .send({ csrf });
    expect(rotated.status).toBe(200);
    const next = shownOnceIn(rotated.text, 'webhook-secret');
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(secret);

    const deliveryId = /data-delivery="(whd_[0-9a-f]{32})"/.exec(logged)![1];
    const again = await agent
      .post(`/portal/apps/${shop.app_id}/webhooks/${id}/redeliver`)
      .type('form')
      .send({ csrf, delivery_id: deliveryId });
    expect(again.status).toBe(303);
    await receiver.waitFor(2, (r) => r.body.includes('"webhook.test"'));

    const recovered = await agent
      .post(`/portal/apps/${shop.app_id}/webhooks/${id}/recover`)
      .type('form')
      .send({ csrf, since: '2026-01-01T00:00' });
    expect(recovered.status).toBe(200);
    expect(recovered.text).toContain('No failed delivery since 2026-01-01T00:00:00.000Z');
    const badSince = await agent
      .post(`/portal/apps/${shop.app_id}/webhooks/${id}/recover`)
      .type('form')
      .send({ csrf, since: 'last tuesday' });
    expect(badSince.status).toBe(400);
    expect(badSince.text).toContain('since must be an ISO 8601 time');

    const saved = await agent
      .post(`/portal/apps/${shop.app_id}/webhooks/${id}/settings`)
      .type('form')
      .send({ csrf, url: receiver.url, description: 'shop backend', enabled_events: 'transaction.mined' });
    expect(saved.status).toBe(303);
    // the checkboxes: the field once per ticked type (issue 40, item 13), each box ticked again on the page
    const boxes = new URLSearchParams([
      ['csrf', csrf],
      ['url', receiver.url],
      ['description', 'shop backend'],
      ['enabled_events', 'payment_request.*'],
      ['enabled_events', 'transaction.failed'],
    ]);
    const ticked = await agent
      .post(`/portal/apps/${shop.app_id}/webhooks/${id}/settings`)
      .type('form')
      .send(boxes.toString());
    expect(ticked.status).toBe(303);
    expect((await tx.admin('get', `/apps/${shop.app_id}/webhooks`)).body).toEqual([
      expect.objectContaining({ webhook_id: id, enabled_events: ['payment_request.*', 'transaction.failed'] }),
    ]);
    const form = (await agent.get(`/portal/apps/${shop.app_id}/webhooks/${id}`)).text;
    const checked = [...form.matchAll(/name="enabled_events" value="([^"]+)" checked/g)].map((m) => m[1]);
    expect(checked).toEqual(['transaction.failed', 'payment_request.*']);
    // every type the transactions service knows has its box
    for (const type of SUBSCRIBABLE_EVENT_TYPES) expect(form).toContain(`name="enabled_events" value="${type}"`);
    const back = await agent
      .post(`/portal/apps/${shop.app_id}/webhooks/${id}/settings`)
      .type('form')
      .send({ csrf, url: receiver.url, description: 'shop backend', enabled_events: 'transaction.mined' });
    expect(back.status).toBe(303);
    const disabled = await agent.post(`/portal/apps/${shop.app_id}/webhooks/${id}/disable`).type('form').send({ csrf });
    expect(disabled.status).toBe(303);
    const refused = await agent.post(`/portal/apps/${shop.app_id}/webhooks/${id}/test`).type('form').send({ csrf });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('enable it');
    const enabled = await agent.post(`/portal/apps/${shop.app_id}/webhooks/${id}/enable`).type('form').send({ csrf });
    expect(enabled.status).toBe(303);
    expect((await tx.admin('get', `/apps/${shop.app_id}/webhooks`)).body).toEqual([
      expect.objectContaining({ webhook_id: id, status: 'enabled', enabled_events: ['transaction.mined'] }),
    ]);

    // every change under the developer's name, in identity's audit trail
    for (const type of [
      'webhook.added',
      'webhook.test_sent',
      'webhook.secret_rotated',
      'webhook.redelivered',
      'webhook.recovered',
      'webhook.updated',
      'webhook.disabled',
      'webhook.enabled',
    ]) {
      const [event] = await portalEvents(type);
      expect([type, event]).toEqual([
        type,
        expect.objectContaining({ actorType: 'user', actor: developer.user_id, subject: id }),
      ]);
      expect(event.detail).toMatchObject({ via: 'portal', username: developer.username });
    }
  });

  it('lets a viewer read webhooks, payments and events, and refuses every webhook change on the server', async () => {
    const agent = await signIn(viewer);
    const list = await agent.get(`/portal/apps/${shop.app_id}/webhooks`);
    expect(list.status).toBe(200);
    expect(list.text).toContain('id="read-only"');
    expect(list.text).not.toContain('id="add-webhook"');
    const id = webhookIdIn(list.text)!;
    const page = await agent.get(`/portal/apps/${shop.app_id}/webhooks/${id}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('id="send-test"');
    expect(page.text).not.toContain('>Redeliver<');
    for (const path of ['payments', 'events'])
      expect((await agent.get(`/portal/apps/${shop.app_id}/${path}`)).status).toBe(200);
    const csrf = hidden(list.text, 'csrf');
    const before = (await tx.admin('get', `/apps/${shop.app_id}/webhooks`)).body;
    const received = receiver.received.length;
    const attempts: [string, Record<string, string>][] = [
      ['/webhooks', { url: receiver.url }],
      [`/webhooks/${id}/settings`, { url: 'https://viewer.example/hook' }],
      [`/webhooks/${id}/test`, {}],
      [`/webhooks/${id}/rotate-secret`, {}],
      [`/webhooks/${id}/disable`, {}],
      [`/webhooks/${id}/recover`, { since: '2026-01-01T00:00' }],
      [`/webhooks/${id}/redeliver`, { delivery_id: `whd_${'0'.repeat(32)}` }],
      [`/webhooks/${id}/remove`, {}],
    ];
    for (const [path, form] of attempts) {
      const res = await agent
        .post(`/portal/apps/${shop.app_id}${path}`)
        .type('form')
        .send({ csrf, ...form });
      expect([path, res.status]).toEqual([path, 403]);
    }
    expect((await tx.admin('get', `/apps/${shop.app_id}/webhooks`)).body).toEqual(before);
    expect(receiver.received.length).toBe(received);
    expect((await portalEvents('webhook.removed')).length).toBe(0);
  });

  it('finds a payment recorded with an API key by reference, with its history; payment requests and events', async () => {
    const { api_key: apiKey } = (await tx.admin('post', `/apps/${shop.app_id}/api-keys`).send({ name: 'payments' }))
      .body as { api_key: string };
    await receiveAt(tx, shop.app_id, `0x${'b'.repeat(40)}`);
    const recorded = await postTransaction(tx, apiKey, {
      app_id: shop.app_id,
      type: 'pay',
      reference: 'order-4711',
      transaction_hash: `0x${'4'.repeat(64)}`,
      from: `0x${'a'.repeat(40)}`,
      to: `0x${'b'.repeat(40)}`,
      chain: 'worldchain',
      token: 'USDCE',
      token_amount: '2500000',
    });
    expect(recorded.status).toBe(201);
    const txId = recorded.body.transaction_id as string;
    const request = await supertestPost(tx, apiKey, '/api/v2/client/payment-requests', {
      reference: 'order-4712',
      chain: 'worldchain',
      token: 'USDCE',
      to: `0x${'b'.repeat(40)}`,
      token_amount: '1000000',
    });
    expect(request.status).toBe(201);

    const agent = await signIn(viewer);
    const found = await agent.get(`/portal/apps/${shop.app_id}/payments`).query({ reference: 'order-4711' });
    expect(found.status).toBe(200);
    expect(found.text).toContain(`data-transaction="${txId}"`);
    expect(found.text).toContain('2.5 USDCE');
    expect(found.text).not.toContain('order-4712');
    expect(found.text).toContain('id="no-requests"');
    const byStatus = await agent.get(`/portal/apps/${shop.app_id}/payments`).query({ status: 'pending' });
    expect(byStatus.text).toContain(`data-request="${request.body.id}"`);
    expect(byStatus.text).toContain(`data-transaction="${txId}"`);
    const mined = await agent.get(`/portal/apps/${shop.app_id}/payments`).query({ status: 'mined' });
    expect(mined.text).not.toContain(txId);
    expect((await agent.get(`/portal/apps/${shop.app_id}/payments`).query({ status: 'bogus' })).status).toBe(400);

    const detail = await agent.get(`/portal/apps/${shop.app_id}/payments/transactions/${txId}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain('id="transaction-amount">2.5 USDCE<');
    expect(detail.text).toMatch(/recorded: pending<\/td><td>api:[^<]+</);
    const pr = await agent.get(`/portal/apps/${shop.app_id}/payments/requests/${request.body.id}`);
    expect(pr.status).toBe(200);
    expect(pr.text).toContain('id="no-payments"');
    expect(pr.text).toContain('1 USDCE');

    // listed once no transaction that began before it is still running (on a shared Postgres, another may be)
    const events = await eventually(async () => {
      const res = await agent.get(`/portal/apps/${shop.app_id}/events`).query({ type: 'transaction.*' });
      expect(res.status).toBe(200);
      return res.text.includes('transaction.created') ? res : undefined;
    });
    expect(events.text).toContain('order-4711');
    const badType = await agent.get(`/portal/apps/${shop.app_id}/events`).query({ type: 'nope.thing' });
    expect(badType.status).toBe(400);
    expect(badType.text).toContain('type');
  });

  it('shows a member of another app none of this app’s webhooks, payments or events: 404', async () => {
    const agent = await signIn(outsider);
    const hooks = (await tx.admin('get', `/apps/${shop.app_id}/webhooks`)).body as { webhook_id: string }[];
    const txs = (await tx.admin('get', '/transactions').query({ app_id: shop.app_id })).body as {
      transactions: { transaction_id: string }[];
    };
    const id = hooks[0].webhook_id;
    for (const path of [
      `/portal/apps/${shop.app_id}/webhooks`,
      `/portal/apps/${shop.app_id}/webhooks/${id}`,
      `/portal/apps/${shop.app_id}/payments`,
      `/portal/apps/${shop.app_id}/payments/transactions/${txs.transactions[0].transaction_id}`,
      `/portal/apps/${shop.app_id}/events`,
      // this app's endpoint and transaction through the outsider's own app: not theirs either
      `/portal/apps/${other.app_id}/webhooks/${id}`,
      `/portal/apps/${other.app_id}/payments/transactions/${txs.transactions[0].transaction_id}`,
    ]) {
      const res = await agent.get(path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).not.toContain(receiver.url);
    }
    const csrf = await csrfOf(agent, '/portal');
    for (const app of [shop.app_id, other.app_id]) {
      const res = await agent.post(`/portal/apps/${app}/webhooks/${id}/remove`).type('form').send({ csrf });
      expect(res.status).toBe(404);
    }
    expect((await tx.admin('get', `/apps/${shop.app_id}/webhooks`)).body).toHaveLength(1);
  });

  it('signs out of the portal and of Attest', async () => {
    const agent = await signIn(owner);
    const csrf = await csrfOf(agent, '/portal');
    const res = await agent.post('/portal/signout').type('form').send({ csrf });
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/^\/logout\?id_token_hint=/);
    const after = await agent.get(`/portal/apps/${shop.app_id}`);
    expect(after.status).toBe(302);
  });
});

describe('app members through the admin API', () => {
  let h: IdentityHarness;
  beforeAll(async () => (h = await identityHarness()));
  afterAll(() => h.close());
  const admin = (method: 'get' | 'put' | 'delete', route: string) =>
    request(h.adminApp)[method](`/admin${route}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  it('adds, changes, lists and removes members, audited, keeping the last owner', async () => {
    const app = await createApp(h);
    const [a, b] = [await createUser(h), await createUser(h)];
    const added = await admin('put', `/apps/${app.app_id}/members`).send({ username: a.username, role: 'owner' });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ app_id: app.app_id, user_id: a.user_id, role: 'owner', added_by: 'admin' });
    expect(
      (await admin('put', `/apps/${app.app_id}/members`).send({ username: b.username, role: 'viewer' })).status,
    ).toBe(201);
    const changed = await admin('put', `/apps/${app.app_id}/members`).send({ username: b.username, role: 'developer' });
    expect(changed.status).toBe(200);
    expect(changed.body.role).toBe('developer');
    const list = await admin('get', `/apps/${app.app_id}/members`);
    expect(list.body.map((m: { username: string }) => m.username)).toEqual([a.username, b.username]);
    const last = await admin('delete', `/apps/${app.app_id}/members/${a.user_id}`);
    expect(last.status).toBe(409);
    expect(last.body).toMatchObject({ code: 'last_owner', attribute: 'role' });
    expect((await admin('delete', `/apps/${app.app_id}/members/${b.user_id}`)).status).toBe(204);
    expect((await admin('delete', `/apps/${app.app_id}/members/${b.user_id}`)).status).toBe(404);
    const types = (
      await h.ctx.kernel.audit.list({
        types: ['app.member_added', 'app.member_changed', 'app.member_removed'],
        limit: 10,
      })
    ).map((e) => [e.type, e.actor, e.detail.username]);
    expect(types).toEqual([
      ['app.member_removed', 'admin', b.username],
      ['app.member_changed', 'admin', b.username],
      ['app.member_added', 'admin', b.username],
      ['app.member_added', 'admin', a.username],
    ]);
  });

  it('names the field that is wrong', async () => {
    const app = await createApp(h);
    const role = await admin('put', `/apps/${app.app_id}/members`).send({ username: 'x', role: 'admin' });
    expect(role.status).toBe(400);
    expect(role.body.attribute).toBe('role');
    const user = await admin('put', `/apps/${app.app_id}/members`).send({ username: 'nobody-at-all', role: 'viewer' });
    expect(user.status).toBe(404);
    expect(user.body.attribute).toBe('username');
    const a = await createUser(h);
    const noApp = await admin('put', '/apps/app_00000000000000000000000000000000/members').send({
      username: a.username,
      role: 'viewer',
    });
    expect(noApp.status).toBe(404);
    expect(noApp.body.attribute).toBe('app_id');
  });
});
