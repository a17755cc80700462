import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService, type RunningService } from '@attest/common';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { identityService } from '../src/main';
import { Browser } from './browser';

type OpenIdClient = typeof import('openid-client');
type Jose = typeof import('jose');
type OAuth = typeof import('oauth4webapi');

const REDIRECT_URI = 'http://localhost:3000/callback';
const ADMIN_TOKEN = 'e2e-admin-token-0123456789abcdef';

describe('a certified OpenID Connect client (openid-client) against the running service', () => {
  let running: RunningService;
  let issuer: string;
  let oidc: OpenIdClient;
  let jose: Jose;
  let oauth: OAuth;
  let app: { app_id: string; client_secret: string };
  const user = { username: 'e2e-user', password: 'correct horse battery' };
  const deviceUser = { username: 'e2e-device-user', password: 'correct horse battery' };
  const ORB = 'urn:attest:loa:orb';

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
    oauth = await import('oauth4webapi');
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
    await admin('/users', { ...deviceUser, verification_level: 'device' });
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
    expect(Object.keys(formPost!.fields).sort()).toEqual(['code', 'id_token', 'state']);
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

  describe('the verification level as acr (issue 24)', () => {
    const essentialOrb = JSON.stringify({ id_token: { acr: { essential: true, values: [ORB] } } });

    it('discovery names acr values and the claims parameter', async () => {
      const meta = (await discover()).serverMetadata();
      expect(meta.acr_values_supported).toEqual([ORB, 'urn:attest:loa:device']);
      expect(meta.claims_parameter_supported).toBe(true);
      expect(meta.claims_supported).toEqual(expect.arrayContaining(['acr', 'amr', 'auth_time']));
    });

    it('openid-client: essential acr orb, an orb-verified person: acr orb in the id_token and (asked) in userinfo', async () => {
      const config = await discover();
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const claims = JSON.stringify({
        id_token: { acr: { essential: true, values: [ORB] } },
        userinfo: { acr: null, auth_time: null },
      });
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        claims,
      });
      const { location } = await new Browser(issuer).signIn(url.toString(), user);
      const tokens = await oidc.authorizationCodeGrant(config, new URL(location!), {
        pkceCodeVerifier: verifier,
        expectedState: state,
      });
      const idToken = tokens.claims()!;
      expect(idToken.acr).toBe(ORB);
      expect(idToken.amr).toEqual(['pwd']);
      expect(typeof idToken.auth_time).toBe('number');
      const info = await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub);
      expect(info).toMatchObject({ acr: ORB, auth_time: idToken.auth_time });
      const introspection = await oidc.tokenIntrospection(config, tokens.access_token);
      expect(introspection).toMatchObject({ active: true, acr: ORB, auth_time: idToken.auth_time });
    });

    it('openid-client: a device-level person gets the page, the app unmet_authentication_requirements', async () => {
      const config = await discover();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        state,
        claims: essentialOrb,
      });
      const { refusal, location } = await new Browser(issuer).signIn(url.toString(), deviceUser);
      expect(location).toBeUndefined();
      expect(refusal!.status).toBe(403);
      expect(refusal!.html).toContain('requires a higher verification level');
      await expect(
        oidc.authorizationCodeGrant(config, new URL(refusal!.backToApp), { expectedState: state }),
      ).rejects.toMatchObject({ error: 'unmet_authentication_requirements' });
    });

    it('oauth4webapi: acr_values is voluntary (the level the person has); essential orb refuses a device-level person', async () => {
      const as = await oauth
        .discoveryRequest(new URL(issuer), { [oauth.allowInsecureRequests]: true })
        .then((res) => oauth.processDiscoveryResponse(new URL(issuer), res));
      const client = { client_id: app.app_id };
      const auth = oauth.ClientSecretBasic(app.client_secret);
      const authorize = (params: Record<string, string>) => {
        const url = new URL(as.authorization_endpoint!);
        url.search = new URLSearchParams({
          client_id: app.app_id,
          redirect_uri: REDIRECT_URI,
          response_type: 'code',
          scope: 'openid',
          ...params,
        }).toString();
        return url.toString();
      };

      const verifier = oauth.generateRandomCodeVerifier();
      const voluntary = await new Browser(issuer).signIn(
        authorize({
          acr_values: ORB,
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        }),
        deviceUser,
      );
      const params = oauth.validateAuthResponse(as, client, new URL(voluntary.location!));
      const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, {
        [oauth.allowInsecureRequests]: true,
      });
      const result = await oauth.processAuthorizationCodeResponse(as, client, response, { requireIdToken: true });
      expect(oauth.getValidatedIdTokenClaims(result)!.acr).toBe('urn:attest:loa:device');

      const essential = await new Browser(issuer).signIn(authorize({ claims: essentialOrb }), deviceUser);
      expect(() => oauth.validateAuthResponse(as, client, new URL(essential.refusal!.backToApp))).toThrow(
        expect.objectContaining({ error: 'unmet_authentication_requirements' }),
      );
    });
  });
});
