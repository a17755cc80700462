import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { freePort } from '@attest/testing';
import { ADMIN_TOKEN, browserFlow, callbackParams, createUser, identityHarness, type IdentityHarness } from './support';

// Issue 41: RFC 8414 metadata (item 1) and Client ID Metadata Documents (item 3), and how the consent page
// names such a client (item 4).

type OAuth = typeof import('oauth4webapi');

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};
const CALLBACK = 'http://127.0.0.1:5999/callback';

/** A client's web server: its metadata documents by path, each with its status and caching, and what was fetched. */
class DocumentHost {
  readonly served = new Map<string, { status: number; body: unknown; cacheControl?: string }>();
  readonly fetched: string[] = [];
  private server!: http.Server;
  base = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      this.fetched.push(req.url!);
      const doc = this.served.get(req.url!);
      if (!doc) return res.writeHead(404).end();
      res.writeHead(doc.status, {
        'content-type': 'application/json',
        ...(doc.cacheControl ? { 'cache-control': doc.cacheControl } : {}),
      });
      res.end(JSON.stringify(doc.body));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Publishes a document at `path` naming its own URL as client_id; the URL. */
  publish(path: string, extra: Record<string, unknown> = {}, cacheControl?: string, status = 200): string {
    const url = `${this.base}${path}`;
    this.served.set(path, {
      status,
      cacheControl,
      body: { client_id: url, client_name: 'Example Agent', redirect_uris: [CALLBACK], ...extra },
    });
    return url;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const authorizeQuery = (clientId: string, challenge: string, extra: Record<string, string> = {}) => ({
  client_id: clientId,
  redirect_uri: CALLBACK,
  response_type: 'code',
  scope: 'openid profile',
  state: 'st',
  code_challenge: challenge,
  code_challenge_method: 'S256',
  ...extra,
});

describe('Client ID Metadata Documents', () => {
  let h: IdentityHarness;
  let offsetMs = 0;
  const host = new DocumentHost();
  beforeAll(async () => {
    await host.start();
    h = await identityHarness({}, {}, { now: () => Date.now() + offsetMs });
  });
  afterAll(async () => {
    await h.close();
    await host.stop();
  });

  const authorize = (query: Record<string, string>) => request(h.publicApp).get('/authorize').query(query);

  it('signs a person in with an https-URL client_id: fetched, used as a public client, PKCE at /token', async () => {
    const clientId = host.publish('/agent.json', { client_uri: 'https://agent.example/' }, 'max-age=300');
    const user = await createUser(h);
    const agent = request.agent(h.publicApp);
    const { verifier, challenge } = pkce();
    const query = authorizeQuery(clientId, challenge);

    let page = await agent.get('/authorize').query(query);
    while (page.status === 302 || page.status === 303) page = await agent.get(page.headers.location);
    const interaction = /name="interaction" value="([^"]+)"/.exec(page.text)![1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1];
    page = await agent
      .post('/signin')
      .type('form')
      .send({ interaction, csrf, username: user.username, password: user.password });
    while (page.status === 302 || page.status === 303) page = await agent.get(page.headers.location);
    // the consent page names it by the host of its address, and says nobody reviewed it
    const hostName = new URL(clientId).host;
    expect(page.text).toContain(`<h1>${hostName} wants to</h1>`);
    expect(page.text).toContain('not reviewed by the operator');
    expect(page.text).toContain(`<code>${clientId}</code>`);
    expect(page.text).toContain('data-scope="profile"');

    const params = callbackParams(await browserFlow(agent, query, user));
    const token = await request(h.publicApp).post('/token').type('form').send({
      grant_type: 'authorization_code',
      code: params.code,
      redirect_uri: CALLBACK,
      client_id: clientId,
      code_verifier: verifier,
    });
    expect(token.status).toBe(200);
    const idToken = JSON.parse(Buffer.from(token.body.id_token.split('.')[1], 'base64url').toString());
    expect(idToken.aud).toBe(clientId);
    // an app row of registration metadata_document, which the operator sees; fetched once (max-age=300)
    const shown = await request(h.adminApp)
      .get(`/admin/apps/${encodeURIComponent(clientId)}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(shown.body).toMatchObject({
      app_id: clientId,
      registration: 'metadata_document',
      name: 'Example Agent',
      token_endpoint_auth_method: 'none',
      redirect_uris: [CALLBACK],
    });
    expect(host.fetched.filter((p) => p === '/agent.json')).toHaveLength(1);
    const audit = await request(h.adminApp)
      .get('/admin/audit?type=app.registered')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(audit.body.events.find((e: { subject: string }) => e.subject === clientId)).toMatchObject({
      actor: { type: 'app', id: clientId },
      detail: { registration: 'metadata_document', redirect_uris: [CALLBACK] },
    });
  });

  it('works at /par: the pushed request of a metadata document client', async () => {
    const clientId = host.publish('/par-agent.json');
    const { challenge } = pkce();
    const pushed = await request(h.publicApp).post('/par').type('form').send(authorizeQuery(clientId, challenge));
    expect(pushed.status).toBe(201);
    const page = await authorize({ client_id: clientId, request_uri: pushed.body.request_uri });
    expect(page.status).toBe(302);
    expect(page.headers.location).toMatch(/^\/signin\?interaction=/);
  });

  it('is fetched again when its caching says, within the bounds; a failed fetch keeps the last version a minute', async () => {
    const clientId = host.publish('/cached.json', {}, 'public, max-age=120');
    const { challenge } = pkce();
    const count = () => host.fetched.filter((p) => p === '/cached.json').length;
    expect((await authorize(authorizeQuery(clientId, challenge))).status).toBe(302);
    expect((await authorize(authorizeQuery(clientId, challenge))).status).toBe(302);
    expect(count()).toBe(1);
    // a new redirect URI published: used once the cached version has expired
    host.publish('/cached.json', { redirect_uris: ['http://127.0.0.1:6000/cb'] }, 'max-age=999999');
    const moved = authorizeQuery(clientId, challenge, { redirect_uri: 'http://127.0.0.1:6000/cb' });
    expect((await authorize(moved)).status).toBe(400);
    offsetMs = 121_000;
    expect((await authorize(moved)).status).toBe(302);
    expect(count()).toBe(2);
    const [row] = await h.storage.db.query<{ metadata_expires_at: Date }>(
      'SELECT metadata_expires_at FROM apps WHERE id = $1',
      [clientId],
    );
    // max-age=999999 is held to a day
    expect(row.metadata_expires_at.getTime() - (Date.now() + offsetMs)).toBeLessThanOrEqual(86400_000);
    expect(row.metadata_expires_at.getTime() - (Date.now() + offsetMs)).toBeGreaterThan(86300_000);
    // the document's server fails: the last version still serves, for a minute before the next try
    host.served.set('/cached.json', { status: 500, body: {} });
    offsetMs += 86401_000;
    expect((await authorize(moved)).status).toBe(302);
    expect(count()).toBe(3);
    expect((await authorize(moved)).status).toBe(302);
    expect(count()).toBe(3);
    offsetMs += 61_000;
    await authorize(moved);
    expect(count()).toBe(4);
    offsetMs = 0;
  });

  it.each([
    [
      'names another client_id',
      { client_id: 'https://elsewhere.example/agent.json' },
      'must name this very URL as its client_id',
    ],
    ['holds a client_secret', { client_secret: 'shh' }, 'must not hold a client_secret'],
    [
      'asks for secret-based authentication',
      { token_endpoint_auth_method: 'client_secret_basic' },
      'token_endpoint_auth_method must be none',
    ],
    [
      'has a redirect URI that is not https',
      { redirect_uris: ['http://agent.example/cb'] },
      'redirect_uris must use https',
    ],
  ])('is refused when it %s, the page says why', async (_name, extra, why) => {
    const path = `/bad-${randomBytes(4).toString('hex')}.json`;
    const clientId = host.publish(path, extra);
    const page = await authorize(authorizeQuery(clientId, pkce().challenge));
    expect(page.status).toBe(400);
    expect(page.text).toContain(`The client_id metadata document at ${clientId}`);
    expect(page.text).toContain(why);
    expect(page.text).toContain('<code id="error-code">invalid_client</code>');
  });

  it('refuses a document that is not there, a redirect URI it does not list, and client_ids it cannot be', async () => {
    const missing = await authorize(authorizeQuery(`${host.base}/nowhere.json`, pkce().challenge));
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('could not be fetched (answered 404)');
    const clientId = host.publish('/exact.json');
    const otherRedirect = await authorize(
      authorizeQuery(clientId, pkce().challenge, { redirect_uri: `${CALLBACK}/x` }),
    );
    expect(otherRedirect.text).toContain('<code id="error-code">invalid_redirect_uri</code>');
    for (const [id, why] of [
      [`${host.base}/`, 'must have a path'],
      [`${host.base}/a/../b.json`, 'must have a path, without . or .. segments'],
      [`http://user:pw@127.0.0.1:1/c.json`, 'must not contain a user name or password'],
    ]) {
      const page = await authorize(authorizeQuery(id, pkce().challenge));
      expect(page.status).toBe(400);
      expect(page.text).toContain(why);
    }
    // /token: an unusable document is an unknown client
    const token = await request(h.publicApp)
      .post('/token')
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: CALLBACK,
        client_id: `${host.base}/nowhere.json`,
        code_verifier: 'v'.repeat(43),
      });
    expect(token.status).toBe(401);
    expect(token.body.error).toBe('invalid_client');
  });

  it('tells what the client’s server answered, never what the network said (no oracle of internal names or ports)', async () => {
    const closed = await freePort(); // nothing listens there
    const page = await authorize(authorizeQuery(`http://127.0.0.1:${closed}/doc.json`, pkce().challenge));
    expect(page.status).toBe(400);
    expect(page.text).toContain('could not be fetched (no usable answer).');
    expect(page.text).not.toMatch(/ECONNREFUSED|connect|127\.0\.0\.1:\d+ /);
  });

  it('deletes document clients nobody signed in to after REGISTRATION_UNUSED_HOURS (named again, fetched again)', async () => {
    const unused = host.publish('/unused.json');
    expect((await authorize(authorizeQuery(unused, pkce().challenge))).status).toBe(302);
    offsetMs = 25 * 3600 * 1000;
    const removed = await h.ctx.registration.registrations.sweep().finally(() => (offsetMs = 0));
    expect(removed).toContain(unused);
    const [row] = await h.storage.db.query('SELECT 1 FROM apps WHERE id = $1', [unused]);
    expect(row).toBeUndefined();
    const [event] = (await h.ctx.kernel.audit.list({ types: ['app.deleted'], limit: 50 })).filter(
      (e) => e.subject === unused,
    );
    expect(event).toMatchObject({ detail: { registration: 'metadata_document', reason: 'unused' } });
    const fetches = host.fetched.filter((f) => f === '/unused.json').length;
    expect((await authorize(authorizeQuery(unused, pkce().challenge))).status).toBe(302);
    expect(host.fetched.filter((f) => f === '/unused.json').length).toBe(fetches + 1);
  });

  it('an operator disables one by its URL', async () => {
    const clientId = host.publish('/disabled.json');
    const { challenge } = pkce();
    expect((await authorize(authorizeQuery(clientId, challenge))).status).toBe(302);
    const disabled = await request(h.adminApp)
      .post(`/admin/apps/${encodeURIComponent(clientId)}/disable`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(disabled.body).toMatchObject({ disabled: true, registration: 'metadata_document' });
    const page = await authorize(authorizeQuery(clientId, challenge));
    expect(page.status).toBe(400);
    expect(page.text).toContain('Unknown or disabled client_id.');
  });

  it('does not give a document the device flow it lists (security review: device-code phishing): the code flow only', async () => {
    const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';
    const clientId = host.publish('/device-agent.json', { grant_types: ['authorization_code', deviceGrant] });
    const { challenge } = pkce();
    // the client is usable, for the code flow only
    expect((await authorize(authorizeQuery(clientId, challenge))).status).toBe(302);
    const shown = await request(h.adminApp)
      .get(`/admin/apps/${encodeURIComponent(clientId)}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(shown.body).toMatchObject({ registration: 'metadata_document', device_authorization_grant: false });
    const started = await request(h.publicApp)
      .post('/device_authorization')
      .type('form')
      .send({ client_id: clientId, scope: 'openid' });
    expect([started.status, started.body.error]).toEqual([400, 'unauthorized_client']);
  });
});

describe('Client ID Metadata Documents through the outbound guard', () => {
  const host = new DocumentHost();
  let strict: IdentityHarness;
  let off: IdentityHarness;
  // two services of their own (each a fresh embedded database on the embedded backend): slow on a busy machine
  beforeAll(async () => {
    await host.start();
    strict = await identityHarness({ BACKCHANNEL_LOGOUT_ALLOW_PRIVATE: 'false' });
    off = await identityHarness({ CLIENT_ID_METADATA_DOCUMENTS: 'false' });
  }, 240000);
  afterAll(async () => {
    await strict?.close();
    await off?.close();
    await host.stop();
  });

  it('refuses a private address unless BACKCHANNEL_LOGOUT_ALLOW_PRIVATE allows it; CLIENT_ID_METADATA_DOCUMENTS=false turns them off', async () => {
    const clientId = host.publish('/private.json');
    const page = await request(strict.publicApp).get('/authorize').query(authorizeQuery(clientId, pkce().challenge));
    expect(page.status).toBe(400);
    expect(page.text).toContain('must not point to a non-public address (127.0.0.1)');
    const unknown = await request(off.publicApp).get('/authorize').query(authorizeQuery(clientId, pkce().challenge));
    expect(unknown.text).toContain('Unknown or disabled client_id.');
    expect(host.fetched).toEqual([]);
    const metadata = await request(off.publicApp).get('/.well-known/oauth-authorization-server');
    expect(metadata.body.client_id_metadata_document_supported).toBe(false);
  });
});

describe('Client ID Metadata Documents: first fetches per address', () => {
  const host = new DocumentHost();
  let h: IdentityHarness;
  beforeAll(async () => {
    await host.start();
    h = await identityHarness({ REGISTRATIONS_PER_ADDRESS: '3' });
  }, 120000);
  afterAll(async () => {
    await h?.close();
    await host.stop();
  });

  it('an address may name REGISTRATIONS_PER_ADDRESS new documents in the window, then 429: no fetch, no app row', async () => {
    const ids = [1, 2, 3, 4].map((n) => host.publish(`/new-${n}.json`));
    for (const id of ids.slice(0, 3))
      expect((await request(h.publicApp).get('/authorize').query(authorizeQuery(id, pkce().challenge))).status).toBe(
        302,
      );
    const fourth = await request(h.publicApp).get('/authorize').query(authorizeQuery(ids[3], pkce().challenge));
    expect(fourth.status).toBe(429);
    expect(fourth.headers['retry-after']).toEqual(expect.any(String));
    expect(fourth.text).toContain('Too many new client_id metadata documents were named from this address');
    expect(host.fetched).not.toContain('/new-4.json');
    expect(await h.storage.db.query('SELECT 1 FROM apps WHERE id = $1', [ids[3]])).toHaveLength(0);
    // a document already known goes on working: its row is used, no slot is taken
    expect((await request(h.publicApp).get('/authorize').query(authorizeQuery(ids[0], pkce().challenge))).status).toBe(
      302,
    );
  });
});

describe('GET /.well-known/oauth-authorization-server (RFC 8414)', () => {
  let h: IdentityHarness;
  let server: http.Server;
  let issuer: string;
  let oauth: OAuth;
  beforeAll(async () => {
    oauth = await import('oauth4webapi');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: issuer });
    server = h.publicApp.listen(port);
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await h.close();
  });

  it('validates in oauth4webapi (oauth2), as the OpenID document still does (oidc): one issuer, the same endpoints', async () => {
    const insecure = { [oauth.allowInsecureRequests]: true };
    const as = await oauth.processDiscoveryResponse(
      new URL(issuer),
      await oauth.discoveryRequest(new URL(issuer), { ...insecure, algorithm: 'oauth2' }),
    );
    const op = await oauth.processDiscoveryResponse(
      new URL(issuer),
      await oauth.discoveryRequest(new URL(issuer), { ...insecure, algorithm: 'oidc' }),
    );
    expect(as.issuer).toBe(issuer);
    expect(op.issuer).toBe(issuer);
    expect(as).toMatchObject({
      registration_endpoint: `${issuer}/register`,
      client_id_metadata_document_supported: true,
      code_challenge_methods_supported: ['S256'],
    });
    // everything the OpenID document says, the RFC 8414 one says alike
    for (const [key, value] of Object.entries(op)) expect(as[key]).toEqual(value);
    expect(op.registration_endpoint).toBeUndefined();
    const raw = await request(h.publicApp).get('/.well-known/oauth-authorization-server');
    expect(raw.headers['access-control-allow-origin']).toBe('*');
    expect(raw.headers['cache-control']).toBe('public, max-age=3600');
    const again = await request(h.publicApp)
      .get('/.well-known/oauth-authorization-server')
      .set('If-None-Match', raw.headers.etag);
    expect(again.status).toBe(304);
  });
});
