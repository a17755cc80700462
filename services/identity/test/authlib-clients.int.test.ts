import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { freePort } from '@attest/testing';
import { ADMIN_TOKEN, browserFlow, callbackParams, createUser, identityHarness, type IdentityHarness } from './support';

type OpenIdClient = typeof import('openid-client');
type OAuth = typeof import('oauth4webapi');

const REDIRECT_URI = 'http://localhost:3000/callback';
/** Debian's python3-authlib is installed for the system Python (.ci/run installs it). */
const PYTHON = '/usr/bin/python3';
const SCRIPTS = path.join(__dirname, 'authlib');

/** Runs one of the Authlib scripts; its answer is the JSON it prints. */
function python(script: string, args: string[], stdin?: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = execFile(PYTHON, [path.join(SCRIPTS, script), ...args], (err, stdout, stderr) => {
      if (err) return reject(new Error(`${script}: ${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout) as Record<string, unknown>);
    });
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

const unsigned = (claims: Record<string, unknown>) =>
  `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;

/**
 * Issue 40, items 3 and 4 with Python's Authlib (1.2, the system Python's python3-authlib): discovery
 * passes OpenIDProviderMetadata.validate() (it wants none and RS256 among the request object algorithms),
 * and oauth4webapi's and openid-client's own checks; unsigned request objects are taken from apps outside
 * the fapi2 profile; Authlib's private_key_jwt client authentication (aud = the token endpoint) redeems a
 * code. The service listens on a port (either backend).
 */
describe('Authlib and the discovery document, unsigned request objects, private_key_jwt (issue 40, items 3, 4)', () => {
  let oidc: OpenIdClient;
  let oauth: OAuth;
  let h: IdentityHarness;
  let server: http.Server;
  let issuer: string;
  let user: { username: string; password: string };
  let dir: string;

  const admin = (method: 'post' | 'get', p: string) =>
    request(h.adminApp)[method](`/admin${p}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  beforeAll(async () => {
    oidc = await import('openid-client');
    oauth = await import('oauth4webapi');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: issuer });
    server = http.createServer(h.publicApp);
    await new Promise<void>((resolve) => server.listen(port, resolve));
    user = await createUser(h);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-authlib-'));
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('discovery passes Authlib’s OpenIDProviderMetadata.validate(), oauth4webapi’s and openid-client’s checks', async () => {
    const document = await (await fetch(`${issuer}/.well-known/openid-configuration`)).text();
    expect(JSON.parse(document).request_object_signing_alg_values_supported).toEqual(
      expect.arrayContaining(['none', 'RS256']),
    );
    expect(await python('validate_discovery.py', [], document)).toEqual({ valid: true });
    const as = await oauth.processDiscoveryResponse(
      new URL(issuer),
      await oauth.discoveryRequest(new URL(issuer), { [oauth.allowInsecureRequests]: true }),
    );
    expect(as.issuer).toBe(issuer);
    const app = (
      await admin('post', '/apps')
        .send({ name: 'RP', redirect_uris: [REDIRECT_URI] })
        .expect(201)
    ).body;
    const config = await oidc.discovery(new URL(issuer), app.app_id, app.client_secret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    expect(config.serverMetadata().request_object_signing_alg_values_supported).toContain('none');
  });

  it('takes an unsigned request object from an app outside the fapi2 profile, by value and pushed; a fapi2 app’s is refused', async () => {
    const app = (
      await admin('post', '/apps')
        .send({ name: 'RP', redirect_uris: [REDIRECT_URI] })
        .expect(201)
    ).body;
    const params = { response_type: 'code', client_id: app.app_id, redirect_uri: REDIRECT_URI, scope: 'openid' };
    const byValue = await browserFlow(
      request.agent(h.publicApp),
      { client_id: app.app_id, request: unsigned({ ...params, state: 'unsigned' }) },
      user,
    );
    expect(callbackParams(byValue)).toMatchObject({ code: expect.any(String), state: 'unsigned', iss: issuer });
    const pushed = await request(h.publicApp)
      .post('/par')
      .auth(app.app_id, app.client_secret)
      .type('form')
      .send({ client_id: app.app_id, request: unsigned({ ...params, state: 'pushed' }) });
    expect(pushed.status).toBe(201);
    // a signature part on an alg none object is not an unsecured JWT
    const tampered = await request(h.publicApp)
      .get('/authorize')
      .query({ client_id: app.app_id, request: `${unsigned(params)}c2ln` });
    expect(tampered.status).toBe(400);
    expect(tampered.text).toContain('an empty signature');

    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    void privateKey;
    const fapi = (
      await admin('post', '/apps')
        .send({
          name: 'FAPI',
          redirect_uris: ['http://127.0.0.1:3000/callback'],
          jwks: { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'ES256' }] },
          profile: 'fapi2',
        })
        .expect(201)
    ).body;
    const refused = await request(h.publicApp)
      .get('/authorize')
      .query({ client_id: fapi.app_id, request: unsigned({ ...params, client_id: fapi.app_id }) });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('this app (FAPI 2.0 profile) must sign its request objects: alg none is refused');
  });

  it('Authlib’s private_key_jwt (aud: the token endpoint’s URL) redeems a code', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyFile = path.join(dir, 'client.pem');
    fs.writeFileSync(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, { mode: 0o600 });
    const app = (
      await admin('post', '/apps')
        .send({
          name: 'Authlib RP',
          redirect_uris: [REDIRECT_URI],
          token_endpoint_auth_method: 'private_key_jwt',
          jwks: { keys: [{ ...publicKey.export({ format: 'jwk' }), use: 'sig' }] },
        })
        .expect(201)
    ).body;
    const code = async () =>
      callbackParams(
        await browserFlow(
          request.agent(h.publicApp),
          { response_type: 'code', client_id: app.app_id, redirect_uri: REDIRECT_URI, scope: 'openid', state: 's' },
          user,
        ),
      ).code;
    const args = (c: string) => [`${issuer}/token`, app.app_id, keyFile, c, REDIRECT_URI];

    // Authlib's assertion with a lifetime the token endpoint takes (its claims parameter): tokens
    const redeemed = await python('private_key_jwt_token.py', [...args(await code()), '--exp-seconds', '120']);
    expect(redeemed.assertion_claims).toMatchObject({ iss: app.app_id, sub: app.app_id, aud: `${issuer}/token` });
    expect(redeemed).toMatchObject({
      status: 200,
      body: { token_type: 'Bearer', access_token: expect.any(String), id_token: expect.any(String) },
    });

    // Authlib's default lifetime (an hour, no claims given): taken as well, so Authlib works as it comes
    const long = await python('private_key_jwt_token.py', args(await code()));
    const claims = long.assertion_claims as { exp: number; iat: number };
    expect(claims.exp - claims.iat).toBe(3600);
    expect(long).toMatchObject({ status: 200, body: { token_type: 'Bearer', access_token: expect.any(String) } });
  });
});
