import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import request from 'supertest';
import { freePort } from '@attest/testing';
import {
  ADMIN_TOKEN,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  identityHarness,
  type IdentityHarness,
} from '../services/identity/test/support';
import { ROOT } from './support';

// Issue 41, "Done when": the MCP SDK's own client, with its OAuth client provider as an MCP host uses it,
// discovers Attest from examples/mcp-server's 401, registers (a Client ID Metadata Document; and through
// /register), signs a person in with PKCE and `resource`, and calls both tools; the orb tool is refused to a
// person verified on a device only, with the RFC 9470 step-up challenge; it refreshes, and a refresh token
// used twice ends its family.

type Auth = typeof import('@modelcontextprotocol/sdk/client/auth.js');
type OAuthClientProvider = import('@modelcontextprotocol/sdk/client/auth.js').OAuthClientProvider;
type OAuthClientInformationMixed = import('@modelcontextprotocol/sdk/shared/auth.js').OAuthClientInformationMixed;
type OAuthTokens = import('@modelcontextprotocol/sdk/shared/auth.js').OAuthTokens;

const ORB = 'urn:attest:loa:orb';
const ORB_TOOL = 'verified_human_greeting';
const CALLBACK = 'http://127.0.0.1:33418/callback';

/** An MCP host's OAuth state for one server, in memory; redirectToAuthorization keeps the URL for the test's "browser". */
class HostProvider implements OAuthClientProvider {
  information?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;

  constructor(readonly clientMetadataUrl?: string) {}
  get redirectUrl() {
    return CALLBACK;
  }
  get clientMetadata() {
    return {
      client_name: 'Test MCP host',
      redirect_uris: [CALLBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/**
 * The MCP host's metadata document, over https as the SDK requires (clientMetadataUrl must be https): a
 * self-signed certificate for 127.0.0.1, which this process's https requests (Attest's outbound fetch runs
 * in it) are made to trust, as NODE_EXTRA_CA_CERTS would make a deployment trust its own CA.
 */
async function documentHost(): Promise<{ url: string; fetched: () => number; close(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-cimd-'));
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1',
    '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
  ], { stdio: 'ignore' }); // prettier-ignore
  const cert = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
  let count = 0;
  let url = '';
  const server = https.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert }, (_req, res) => {
    count++;
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' });
    res.end(
      JSON.stringify({ client_id: url, ...new HostProvider().clientMetadata, client_uri: 'https://host.example/' }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/client.json`;
  const original = https.request;
  const trusted = [...tls.rootCertificates, cert];
  (https as { request: unknown }).request = (target: unknown, options?: unknown, callback?: unknown) =>
    typeof options === 'object' && options !== null
      ? original(target as URL, { ca: trusted, ...(options as https.RequestOptions) }, callback as () => void)
      : original(target as URL, options as () => void);
  return {
    url,
    fetched: () => count,
    close: async () => {
      (https as { request: unknown }).request = original;
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('examples/mcp-server with the MCP SDK client', () => {
  let h: IdentityHarness;
  let identity: http.Server;
  let example: ChildProcess;
  let output = '';
  let resource: string;
  let host: Awaited<ReturnType<typeof documentHost>>;
  let sdk: {
    auth: Auth;
    errors: typeof import('@modelcontextprotocol/sdk/server/auth/errors.js');
    Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
    Transport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  };
  const responses: { url: string; status: number; challenge: string | null }[] = [];
  const recordingFetch = async (url: string | URL, init?: RequestInit) => {
    const res = await fetch(url, init);
    responses.push({ url: String(url), status: res.status, challenge: res.headers.get('www-authenticate') });
    return res;
  };

  beforeAll(async () => {
    sdk = {
      auth: await import('@modelcontextprotocol/sdk/client/auth.js'),
      errors: await import('@modelcontextprotocol/sdk/server/auth/errors.js'),
      Client: (await import('@modelcontextprotocol/sdk/client/index.js')).Client,
      Transport: (await import('@modelcontextprotocol/sdk/client/streamableHttp.js')).StreamableHTTPClientTransport,
    };
    const [port, mcpPort] = [await freePort(), await freePort()];
    const issuer = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: issuer });
    identity = h.publicApp.listen(port);
    resource = `http://localhost:${mcpPort}/mcp`;
    const created = await request(h.adminApp)
      .post('/admin/resources')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ uri: resource, name: 'Example tools', scopes: ['tools:call'] });
    if (created.status !== 201) throw new Error(`resource create: ${created.status} ${JSON.stringify(created.body)}`);
    example = spawn(process.execPath, [path.join(ROOT, 'examples/mcp-server/server.mjs')], {
      cwd: ROOT,
      env: {
        ...process.env,
        ISSUER: issuer,
        PORT: String(mcpPort),
        RESOURCE: resource,
        SCOPES: 'openid offline_access tools:call',
      },
    });
    example.stdout!.on('data', (d) => (output += d));
    example.stderr!.on('data', (d) => (output += d));
    for (let i = 0; i < 100 && !output.includes('MCP server on'); i++) await new Promise((r) => setTimeout(r, 100));
    if (!output.includes('MCP server on')) throw new Error(`the example did not start: ${output}`);
    host = await documentHost();
  }, 120000);

  afterAll(async () => {
    example?.kill('SIGTERM');
    await host?.close();
    await new Promise((resolve) => identity?.close(resolve));
    await h?.close();
  });

  /** The consent page of the last sign-in. */
  let consentPage = '';

  /** The person signs in and approves in the "browser" the provider was sent to; the code the host receives. */
  async function signIn(
    provider: HostProvider,
    user: { username: string; password: string },
    target = resource,
  ): Promise<string> {
    const url = provider.authorizationUrl!;
    expect(url.searchParams.get('resource')).toBe(target);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    const agent = request.agent(h.publicApp);
    let res = await agent.get(`${url.pathname}${url.search}`);
    for (let i = 0; i < 8 && res.headers.location?.startsWith('/'); i++) res = await agent.get(res.headers.location);
    const form = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(res.text)![1];
    res = await agent
      .post('/signin')
      .type('form')
      .send({ interaction: form('interaction'), csrf: form('csrf'), ...user });
    for (let i = 0; i < 8 && res.headers.location?.startsWith('/'); i++) res = await agent.get(res.headers.location);
    consentPage = res.text;
    res = await agent
      .post('/consent')
      .type('form')
      .send({ interaction: form('interaction'), csrf: form('csrf'), decision: 'approve' });
    const params = callbackParams(res);
    expect(params.error).toBeUndefined();
    return params.code;
  }

  /** An MCP host connecting: 401 → discovery → registration → sign-in → finishAuth → connected client. */
  async function connect(provider: HostProvider, user: { username: string; password: string }, target = resource) {
    const first = new sdk.Transport(new URL(target), { authProvider: provider, fetch: recordingFetch });
    const refused = await new sdk.Client({ name: 'test-host', version: '1.0.0' }).connect(first).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(sdk.auth.UnauthorizedError);
    await first.finishAuth(await signIn(provider, user, target));
    const client = new sdk.Client({ name: 'test-host', version: '1.0.0' });
    await client.connect(new sdk.Transport(new URL(target), { authProvider: provider, fetch: recordingFetch }));
    return client;
  }

  const text = (result: Record<string, unknown>) => (result.content as { type: string; text: string }[])[0].text;

  it('registers through /register, signs an orb person in with PKCE and resource, calls both tools', async () => {
    const orb = await createUser(h, { verification_level: 'orb' });
    const provider = new HostProvider();
    const client = await connect(provider, orb);
    // the 401 named the metadata, which named Attest
    const challenge = responses.find((r) => r.url === resource && r.status === 401)!.challenge!;
    expect(challenge).toContain(
      `resource_metadata="${new URL(resource).origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    // registered at /register: an app marked dynamic
    const clientId = provider.information!.client_id;
    expect(clientId).toMatch(/^app_[0-9a-f]{32}$/);
    const app = await request(h.adminApp).get(`/admin/apps/${clientId}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(app.body.registration).toBe('dynamic');
    // the consent page said who asked, for which resource, and each scope
    expect(consentPage).toContain('<h1>Test MCP host wants to</h1>');
    expect(consentPage).toMatch(/not reviewed by the\s+operator/);
    expect(consentPage).toContain('Access <strong>Example tools</strong>');
    expect(consentPage).toContain('data-scope="openid"');
    expect(consentPage).toContain('data-scope="tools:call"');
    // the access token is for this server only
    const claims = JSON.parse(Buffer.from(provider.saved!.access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ aud: resource, client_id: clientId, acr: ORB });

    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(tools).toEqual([ORB_TOOL, 'whoami']);
    expect(JSON.parse(text(await client.callTool({ name: 'whoami' })))).toMatchObject({
      acr: ORB,
      client_id: clientId,
    });
    const greeting = await client.callTool({ name: ORB_TOOL });
    expect(greeting.isError).toBeFalsy();
    expect(text(greeting)).toBe(`Hello, verified human ${claims.sub}.`);
    await client.close();

    // refreshes: the SDK's auth() with a refresh token rotates it; the new access token calls the tools
    const first = provider.saved!;
    expect(first.refresh_token).toBeTruthy();
    expect(await sdk.auth.auth(provider, { serverUrl: resource, fetchFn: recordingFetch })).toBe('AUTHORIZED');
    const second = provider.saved!;
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    const refreshedClaims = JSON.parse(Buffer.from(second.access_token.split('.')[1], 'base64url').toString());
    expect(refreshedClaims).toMatchObject({ aud: resource, client_id: clientId, acr: ORB, sub: claims.sub });
    const again = new sdk.Client({ name: 'test-host', version: '1.0.0' });
    await again.connect(new sdk.Transport(new URL(resource), { authProvider: provider, fetch: recordingFetch }));
    expect(JSON.parse(text(await again.callTool({ name: 'whoami' })))).toMatchObject({ sub: claims.sub });
    await again.close();

    // the first refresh token used again: refused, and its family ends (the rotated one stops working too)
    const refresh = (refreshToken: string) =>
      sdk.auth.refreshAuthorization(h.config.issuer, {
        clientInformation: provider.information!,
        refreshToken,
        resource,
        fetchFn: recordingFetch,
      });
    await expect(refresh(first.refresh_token!)).rejects.toBeInstanceOf(sdk.errors.InvalidGrantError);
    await expect(refresh(second.refresh_token!)).rejects.toBeInstanceOf(sdk.errors.InvalidGrantError);
  });

  it('a server that offers its own scopes only (no openid): the host asks for them alone and gets a token for it, no id_token', async () => {
    const port = await freePort();
    const target = `http://localhost:${port}/mcp`;
    await request(h.adminApp)
      .post('/admin/resources')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ uri: target, name: 'Plain tools', scopes: ['tools:call'] })
      .expect(201);
    const plain = spawn(process.execPath, [path.join(ROOT, 'examples/mcp-server/server.mjs')], {
      cwd: ROOT,
      env: { ...process.env, ISSUER: h.config.issuer, PORT: String(port), RESOURCE: target, SCOPES: 'tools:call' },
    });
    let started = '';
    plain.stdout!.on('data', (d) => (started += d));
    plain.stderr!.on('data', (d) => (started += d));
    try {
      for (let i = 0; i < 100 && !started.includes('MCP server on'); i++) await new Promise((r) => setTimeout(r, 100));
      expect(started).toContain('MCP server on');
      const provider = new HostProvider();
      const client = await connect(provider, await createUser(h, { verification_level: 'orb' }), target);
      // the host asked for what the server's metadata lists: its scope alone
      expect(provider.authorizationUrl!.searchParams.get('scope')).toBe('tools:call');
      expect(consentPage).toContain('Access <strong>Plain tools</strong>');
      expect(consentPage).not.toContain('data-scope="openid"');
      expect(provider.saved!.id_token).toBeUndefined();
      expect(provider.saved!.scope).toBe('tools:call');
      const claims = JSON.parse(Buffer.from(provider.saved!.access_token.split('.')[1], 'base64url').toString());
      expect(claims).toMatchObject({ aud: target, scope: 'tools:call', acr: ORB });
      expect(JSON.parse(text(await client.callTool({ name: 'whoami' })))).toMatchObject({ sub: claims.sub });
      await client.close();
    } finally {
      plain.kill('SIGTERM');
    }
  });

  it('registers with a Client ID Metadata Document; a device-level person is refused the orb tool (RFC 9470)', async () => {
    const device = await createUser(h, { verification_level: 'device' });
    const provider = new HostProvider(host.url);
    const client = await connect(provider, device);
    expect(provider.information!.client_id).toBe(host.url);
    expect(host.fetched()).toBe(1);
    const app = await request(h.adminApp)
      .get(`/admin/apps/${encodeURIComponent(host.url)}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(app.body).toMatchObject({ registration: 'metadata_document', name: 'Test MCP host' });
    expect(consentPage).toContain('<h1>127.0.0.1:');
    expect(consentPage).toContain(`<code>${host.url}</code>`);
    expect(consentPage).toContain('Access <strong>Example tools</strong>');

    expect(JSON.parse(text(await client.callTool({ name: 'whoami' })))).toMatchObject({
      acr: 'urn:attest:loa:device',
      client_id: host.url,
    });
    const before = responses.length;
    const refused = await client.callTool({ name: ORB_TOOL }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(Error);
    const stepUp = responses.slice(before).find((r) => r.url === resource && r.status === 401);
    expect(stepUp?.challenge).toContain('error="insufficient_user_authentication"');
    expect(stepUp?.challenge).toContain(`acr_values="${ORB}"`);
    await client.close();
  });

  it('refuses a token that is not for it, and a request without one, naming its metadata', async () => {
    const app = await createApp(h, ['http://localhost:3000/callback']);
    const user = await createUser(h);
    const agent = request.agent(h.publicApp);
    const params = callbackParams(
      await browserFlow(
        agent,
        {
          client_id: app.app_id,
          redirect_uri: 'http://localhost:3000/callback',
          response_type: 'code',
          scope: 'openid',
        },
        user,
      ),
    );
    const tokens = await request(h.publicApp)
      .post('/token')
      .auth(app.app_id, app.client_secret)
      .type('form')
      .send({ grant_type: 'authorization_code', code: params.code, redirect_uri: 'http://localhost:3000/callback' });
    const call = (authorization?: string) =>
      fetch(resource, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const other = await call(`Bearer ${tokens.body.access_token}`);
    expect(other.status).toBe(401);
    expect(other.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const none = await call();
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(
      /^Bearer resource_metadata="http:\/\/localhost:\d+\/\.well-known\/oauth-protected-resource\/mcp"$/,
    );
    const metadata = await (await fetch(`${new URL(resource).origin}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(metadata).toEqual({
      resource,
      authorization_servers: [h.config.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: ['openid', 'offline_access', 'tools:call'],
      resource_name: 'Attest example MCP server',
    });
  });
});
