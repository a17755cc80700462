import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService, type RunningService } from '@attest/common';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { identityService } from '../src/main';
import { Browser } from './browser';

type OpenIdClient = typeof import('openid-client');
type Jose = typeof import('jose');

const REDIRECT_URI = 'http://localhost:3000/callback';
const ADMIN_TOKEN = 'e2e-admin-token-0123456789abcdef';

describe('a certified OpenID Connect client (openid-client) against the running service', () => {
  let running: RunningService;
  let issuer: string;
  let oidc: OpenIdClient;
  let jose: Jose;
  let app: { app_id: string; client_secret: string };
  const user = { username: 'e2e-user', password: 'correct horse battery' };

  const admin = async (route: string, body: unknown): Promise<{ app_id: string; client_secret: string }> => {
    const res = await fetch(`${running.adminUrl}/admin${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${route}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { app_id: string; client_secret: string };
  };

  beforeAll(async () => {
    oidc = await import('openid-client');
    jose = await import('jose');
    const [port, adminPort] = [await freePort(), await freePort()];
    issuer = `http://localhost:${port}`;
    const config = identityService.loadConfig({
      IDENTITY_PORT: String(port),
      IDENTITY_ADMIN_PORT: String(adminPort),
      BASE_URL: issuer,
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'attest-e2e-')),
      ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
    });
    running = await startService(identityService, config);
    app = await admin('/apps', { name: 'E2E app', redirect_uris: [REDIRECT_URI] });
    await admin('/users', { ...user, verification_level: 'orb', name: 'Eve Example' });
  }, 60000);
  afterAll(() => running?.stop());

  const discover = async () =>
    oidc.discovery(new URL(issuer), app.app_id, undefined, oidc.ClientSecretBasic(app.client_secret), {
      execute: [oidc.allowInsecureRequests],
    });

  async function verifyWithJwks(idToken: string) {
    const jwks = jose.createRemoteJWKSet(new URL(`${issuer}/jwks`));
    const { payload, protectedHeader } = await jose.jwtVerify(idToken, jwks, { issuer, audience: app.app_id });
    expect(protectedHeader.alg).toBe('RS256');
    return payload;
  }

  it('code flow with PKCE: tokens, verified id_token, userinfo', async () => {
    const config = await discover();
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const { location } = await new Browser(issuer).signIn(url.toString(), user);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(location!), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    const claims = tokens.claims()!;
    expect(claims.sub).toMatch(/^0x[0-9a-f]{64}$/);
    expect(claims[`${issuer}/v1`]).toEqual({ verification_level: 'orb' });
    expect(claims.email).toBe(`${claims.sub}@localhost`);
    const verified = await verifyWithJwks(tokens.id_token!);
    expect(verified.sub).toBe(claims.sub);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).toMatchObject({ sub: claims.sub, name: 'Eve Example', email: `${claims.sub}@localhost` });
  });

  it('implicit flow (id_token): nonce and signature checked', async () => {
    const config = await discover();
    oidc.useIdTokenResponseType(config);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid', state, nonce });
    expect(url.searchParams.get('response_type')).toBe('id_token');
    const { location } = await new Browser(issuer).signIn(url.toString(), user);
    expect(new URL(location!).hash).toContain('id_token=');
    const claims = await oidc.implicitAuthentication(config, new URL(location!), nonce, { expectedState: state });
    expect(claims.nonce).toBe(nonce);
    expect((await verifyWithJwks(new URLSearchParams(new URL(location!).hash.slice(1)).get('id_token')!)).nonce).toBe(
      nonce,
    );
  });

  it('hybrid flow (code id_token) with form_post', async () => {
    const config = await discover();
    oidc.useCodeIdTokenResponseType(config);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid email',
      state,
      nonce,
      response_mode: 'form_post',
    });
    const { formPost } = await new Browser(issuer).signIn(url.toString(), user);
    expect(formPost!.action).toBe(REDIRECT_URI);
    expect(Object.keys(formPost!.fields).sort()).toEqual(['code', 'id_token', 'iss', 'state']);
    const callback = new Request(REDIRECT_URI, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(formPost!.fields).toString(),
    });
    const tokens = await oidc.authorizationCodeGrant(config, callback, { expectedState: state, expectedNonce: nonce });
    expect(tokens.token_type).toBe('bearer');
    await verifyWithJwks(formPost!.fields.id_token);
    await verifyWithJwks(tokens.id_token!);
  });
  it('PAR with private_key_jwt (a require-PAR app): pushed request, code, tokens, introspection', async () => {
    const { privateKey, publicKey } = await jose.generateKeyPair('PS256', { extractable: true });
    const jwk = { ...(await jose.exportJWK(publicKey)), kid: 'e2e-ps256', use: 'sig', alg: 'PS256' };
    const bank = await admin('/apps', {
      name: 'E2E bank',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [jwk] },
      require_pushed_authorization_requests: true,
    });
    const config = await oidc.discovery(
      new URL(issuer),
      bank.app_id,
      undefined,
      oidc.PrivateKeyJwt({ key: privateKey, kid: 'e2e-ps256' }),
      { execute: [oidc.allowInsecureRequests] },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    expect(url.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    const { location } = await new Browser(issuer).signIn(url.toString(), user);
    expect(new URL(location!).searchParams.get('iss')).toBe(issuer);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(location!), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.claims()?.aud).toBe(bank.app_id);
    const introspection = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(introspection).toMatchObject({ active: true, client_id: bank.app_id });

    // the app requires PAR: a plain authorization URL is refused back at the app
    const plain = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const refused = await fetch(plain, { redirect: 'manual' });
    const back = new URL(refused.headers.get('location')!);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('iss')).toBe(issuer);
  });
});
