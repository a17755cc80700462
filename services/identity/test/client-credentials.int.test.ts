import type { Server } from 'node:http';
import request from 'supertest';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { ADMIN_TOKEN, basic, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';

type OpenIdClient = typeof import('openid-client');
type Jose = typeof import('jose');
type Client = { app_id: string; client_secret?: string };
type Resource = { resource_id: string; introspection_secret: string };

const TOOLS = 'https://tools.example.com/mcp';
const VAULT = 'https://vault.example.com/api';

/** client_credentials (issue 41, item 4): a confidential app acting as itself gets a token for a resource. */
describe('client_credentials', () => {
  let oidc: OpenIdClient;
  let jose: Jose;
  let h: IdentityHarness;
  let server: Server;
  let issuer: string;
  let app: Client;
  let publicApp: Client;
  let tools: Resource;

  const admin = (method: 'post' | 'get' | 'patch', path: string) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  beforeAll(async () => {
    oidc = await import('openid-client');
    jose = await import('jose');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: issuer });
    await new Promise<void>((resolve) => {
      server = h.publicApp.listen(port, '127.0.0.1', () => resolve());
    });
    app = (
      await admin('post', '/admin/apps')
        .send({ name: 'Backend', redirect_uris: [REDIRECT_URI] })
        .expect(201)
    ).body;
    publicApp = (
      await admin('post', '/admin/apps')
        .send({ name: 'CLI', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' })
        .expect(201)
    ).body;
    tools = (
      await admin('post', '/admin/resources')
        .send({ uri: TOOLS, name: 'Tools', scopes: ['tools:read', 'tools:write'], machine_clients: [app.app_id] })
        .expect(201)
    ).body;
    await admin('post', '/admin/resources')
      .send({
        uri: VAULT,
        name: 'Vault',
        scopes: ['vault:read'],
        min_verification_level: 'device',
        machine_clients: [app.app_id],
      })
      .expect(201);
  });
  afterAll(async () => {
    if (server) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    await h?.close();
  });

  const config = () =>
    oidc.discovery(new URL(issuer), app.app_id, undefined, oidc.ClientSecretBasic(app.client_secret!), {
      execute: [oidc.allowInsecureRequests],
    });
  const raw = (client: Client, form: Record<string, string>) => {
    const req = request(h.publicApp).post('/token').type('form');
    if (client.client_secret) req.set('Authorization', basic(client.app_id, client.client_secret));
    return req.send({
      grant_type: 'client_credentials',
      ...(client.client_secret ? {} : { client_id: client.app_id }),
      ...form,
    });
  };
  const introspect = (token: string) =>
    request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(tools.resource_id, tools.introspection_secret))
      .type('form')
      .send({ token });

  it('is in discovery', async () => {
    const doc = (await request(h.publicApp).get('/.well-known/openid-configuration').expect(200)).body;
    expect(doc.grant_types_supported).toContain('client_credentials');
  });

  it('gives openid-client’s clientCredentialsGrant an RFC 9068 token for the resource, sub the app', async () => {
    const tokens = await oidc.clientCredentialsGrant(await config(), { resource: TOOLS, scope: 'tools:read' });
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'tools:read', expires_in: 3600 });
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.id_token).toBeUndefined();
    const jwks = jose.createRemoteJWKSet(new URL(`${issuer}/jwks`));
    const { payload, protectedHeader } = await jose.jwtVerify(tokens.access_token, jwks, {
      issuer,
      audience: TOOLS,
      typ: 'at+jwt',
    });
    expect(protectedHeader.typ).toBe('at+jwt');
    expect(payload).toMatchObject({ sub: app.app_id, client_id: app.app_id, scope: 'tools:read' });
    expect(payload.acr).toBeUndefined();
    const answer = await introspect(tokens.access_token).expect(200);
    expect(answer.body).toMatchObject({ active: true, sub: app.app_id, client_id: app.app_id, aud: TOOLS });
    // the app's own introspection of its token says the same
    const own = await request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(app.app_id, app.client_secret!))
      .type('form')
      .send({ token: tokens.access_token })
      .expect(200);
    expect(own.body).toMatchObject({ active: true, sub: app.app_id, client_id: app.app_id, scope: 'tools:read' });
    // not a token for /userinfo
    await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${tokens.access_token}`).expect(401);
    // the app disabled: its token goes inactive
    await admin('post', `/admin/apps/${app.app_id}/disable`).expect(200);
    expect((await introspect(tokens.access_token).expect(200)).body).toEqual({ active: false });
    await admin('post', `/admin/apps/${app.app_id}/enable`).expect(200);
    expect((await introspect(tokens.access_token).expect(200)).body.active).toBe(true);
  });

  it('signs with the app’s access_token_signed_response_alg, as its other access tokens', async () => {
    const es256 = (
      await admin('post', '/admin/apps')
        .send({ name: 'ES256 backend', redirect_uris: [REDIRECT_URI], access_token_signed_response_alg: 'ES256' })
        .expect(201)
    ).body as Client;
    await admin('patch', `/admin/resources/${tools.resource_id}`)
      .send({ machine_clients: [app.app_id, es256.app_id] })
      .expect(200);
    const res = await raw(es256, { resource: TOOLS }).expect(200);
    const jwks = jose.createRemoteJWKSet(new URL(`${issuer}/jwks`));
    const { protectedHeader, payload } = await jose.jwtVerify(res.body.access_token, jwks, { issuer, audience: TOOLS });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload.client_id).toBe(es256.app_id);
    // the default app's stay RS256
    const plain = await raw(app, { resource: TOOLS }).expect(200);
    expect(jose.decodeProtectedHeader(plain.body.access_token).alg).toBe('RS256');
  });

  it('signs with the resource’s access_token_alg when it chose PS256 or ES256 (RFC 9068 §2.1), else the app’s', async () => {
    const created = await admin('post', '/admin/resources')
      .send({ uri: 'https://fast.example.com/api', name: 'Fast', scopes: ['fast:read'], machine_clients: [app.app_id] })
      .expect(201);
    expect(created.body.access_token_alg).toBe('RS256');
    const jwks = jose.createRemoteJWKSet(new URL(`${issuer}/jwks`));
    const algOf = async () => {
      const res = await raw(app, { resource: 'https://fast.example.com/api' }).expect(200);
      const verified = await jose.jwtVerify(res.body.access_token, jwks, {
        issuer,
        audience: 'https://fast.example.com/api',
        typ: 'at+jwt',
      });
      expect(verified.payload).toMatchObject({ client_id: app.app_id, scope: 'fast:read' });
      // the resource server's introspection takes it as any other
      const answer = await request(h.publicApp)
        .post('/introspect')
        .set('Authorization', basic(created.body.resource_id, created.body.introspection_secret))
        .type('form')
        .send({ token: res.body.access_token })
        .expect(200);
      expect(answer.body).toMatchObject({ active: true, client_id: app.app_id });
      return verified.protectedHeader.alg;
    };
    expect(await algOf()).toBe('RS256');
    const patched = await admin('patch', `/admin/resources/${created.body.resource_id}`)
      .send({ access_token_alg: 'ES256' })
      .expect(200);
    expect(patched.body).toMatchObject({ access_token_alg: 'ES256', scopes: ['fast:read'] });
    expect(await algOf()).toBe('ES256');
    await admin('patch', `/admin/resources/${created.body.resource_id}`)
      .send({ access_token_alg: 'PS256' })
      .expect(200);
    expect(await algOf()).toBe('PS256');
    // the other resources' stay the app's
    expect(jose.decodeProtectedHeader((await raw(app, { resource: TOOLS }).expect(200)).body.access_token).alg).toBe(
      'RS256',
    );
    const bad = await admin('patch', `/admin/resources/${created.body.resource_id}`).send({
      access_token_alg: 'HS256',
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('access_token_alg');
    await admin('patch', `/admin/resources/${created.body.resource_id}`)
      .send({ access_token_alg: 'RS256' })
      .expect(200);
    expect(await algOf()).toBe('RS256');
  });

  it('without scope, every scope the resource offers', async () => {
    const res = await raw(app, { resource: TOOLS }).expect(200);
    expect(res.body.scope).toBe('tools:read tools:write');
  });

  it('gives a token only to an app the operator named among the resource’s machine clients (unauthorized_client)', async () => {
    const other = (
      await admin('post', '/admin/apps')
        .send({ name: 'Partner', redirect_uris: [REDIRECT_URI] })
        .expect(201)
    ).body as Client;
    const refused = await raw(other, { resource: TOOLS }).expect(400);
    expect(refused.body).toMatchObject({
      error: 'unauthorized_client',
      error_description: expect.stringContaining(`--machine-client ${other.app_id}`),
    });
    // the operator adds it (pnpm manage resource update … --machine-client): now it may; taken away, it may not
    const patched = await admin('patch', `/admin/resources/${tools.resource_id}`)
      .send({ machine_clients: [app.app_id, other.app_id] })
      .expect(200);
    expect(patched.body.machine_clients).toEqual([app.app_id, other.app_id]);
    const given = await raw(other, { resource: TOOLS, scope: 'tools:read' }).expect(200);
    expect(given.body.scope).toBe('tools:read');
    await admin('patch', `/admin/resources/${tools.resource_id}`)
      .send({ machine_clients: [app.app_id] })
      .expect(200);
    expect((await raw(other, { resource: TOOLS }).expect(400)).body.error).toBe('unauthorized_client');
    // an app id that is not one is refused by name
    const bad = await admin('patch', `/admin/resources/${tools.resource_id}`).send({ machine_clients: ['nope'] });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('machine_clients: nope is not an app id');
  });

  it('refuses what it cannot give: no or unknown resource, a scope not offered, a resource needing a person, a public client', async () => {
    expect((await raw(app, {}).expect(400)).body.error).toBe('invalid_target');
    expect((await raw(app, { resource: 'https://nowhere.example.com/' }).expect(400)).body.error).toBe(
      'invalid_target',
    );
    const scope = await raw(app, { resource: TOOLS, scope: 'tools:admin' }).expect(400);
    expect(scope.body.error).toBe('invalid_scope');
    expect(scope.body.error_description).toContain('tools:admin');
    expect((await raw(app, { resource: TOOLS, scope: 'openid' }).expect(400)).body.error).toBe('invalid_scope');
    const person = await raw(app, { resource: VAULT }).expect(400);
    expect(person.body.error).toBe('invalid_target');
    expect(person.body.error_description).toContain('verified at level device');
    expect((await raw(publicApp, { resource: TOOLS }).expect(400)).body.error).toBe('unauthorized_client');
    expect(
      (await raw({ app_id: app.app_id, client_secret: 'sk_wrong' }, { resource: TOOLS }).expect(401)).body.error,
    ).toBe('invalid_client');
  });
});
