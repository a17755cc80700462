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
    // acr_values and max_age as the conformance suite sends them: openid-client checks auth_time (maxAge)
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      state,
      nonce,
      acr_values: ORB,
      max_age: '300',
    });
    expect(url.searchParams.get('response_type')).toBe('id_token');
    const { location } = await new Browser(issuer).signIn(url.toString(), user);
    expect(new URL(location!).hash).toContain('id_token=');
    const claims = await oidc.implicitAuthentication(config, new URL(location!), nonce, {
      expectedState: state,
      maxAge: 300,
    });
    expect(claims.nonce).toBe(nonce);
    expect(config.serverMetadata().acr_values_supported).toContain(claims.acr);
    expect(claims.acr).toBe(ORB);
    expect(claims.auth_time).toEqual(expect.any(Number));
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
      claims: JSON.stringify({ id_token: { acr: { essential: true, values: [ORB] } } }),
      max_age: '300',
    });
    const { formPost } = await new Browser(issuer).signIn(url.toString(), user);
    expect(formPost!.action).toBe(REDIRECT_URI);
    expect(Object.keys(formPost!.fields).sort()).toEqual(['code', 'id_token', 'iss', 'state']);
    const callback = new Request(REDIRECT_URI, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(formPost!.fields).toString(),
    });
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      expectedState: state,
      expectedNonce: nonce,
      maxAge: 300,
    });
    expect(tokens.token_type).toBe('bearer');
    // the essential acr in both id_tokens (the authorization endpoint's and /token's), with auth_time
    for (const idToken of [await verifyWithJwks(formPost!.fields.id_token), await verifyWithJwks(tokens.id_token!)]) {
      expect(idToken.acr).toBe(ORB);
      expect(idToken.auth_time).toEqual(expect.any(Number));
    }
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

  describe('DPoP (RFC 9449): an app that requires it', () => {
    let dpopApp: { app_id: string; client_secret: string };
    beforeAll(async () => {
      dpopApp = await admin('/apps', {
        name: 'E2E DPoP app',
        redirect_uris: [REDIRECT_URI],
        dpop_bound_access_tokens: true,
      });
    });

    const discoverDpop = async () =>
      oidc.discovery(new URL(issuer), dpopApp.app_id, undefined, oidc.ClientSecretBasic(dpopApp.client_secret), {
        execute: [oidc.allowInsecureRequests],
      });

    async function signIn(config: Awaited<ReturnType<typeof discoverDpop>>, extra: Record<string, string> = {}) {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid profile',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        ...extra,
      });
      const { location } = await new Browser(issuer).signIn(url.toString(), user);
      return { callback: new URL(location!), checks: { pkceCodeVerifier: verifier, expectedState: state } };
    }

    it('signs in with a DPoP key (and dpop_jkt): a DPoP-bound token that /userinfo accepts only with proofs', async () => {
      const config = await discoverDpop();
      expect(config.serverMetadata().dpop_signing_alg_values_supported).toContain('ES256');
      const keyPair = await oidc.randomDPoPKeyPair('ES256');
      const DPoP = oidc.getDPoPHandle(config, keyPair);
      const { callback, checks } = await signIn(config, { dpop_jkt: await DPoP.calculateThumbprint() });
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks, undefined, { DPoP });
      expect(tokens.token_type).toBe('dpop');
      const access = jose.decodeJwt(tokens.access_token);
      expect(access.cnf).toEqual({ jkt: await DPoP.calculateThumbprint() });
      const sub = tokens.claims()!.sub;
      // twice: each call is a new proof (the second with the server's DPoP-Nonce)
      for (let i = 0; i < 2; i++)
        expect(await oidc.fetchUserInfo(config, tokens.access_token, sub, { DPoP })).toMatchObject({
          sub,
          name: 'Eve Example',
        });
      // the same token as a bearer token is refused with a DPoP challenge
      const bearer = await oidc.fetchUserInfo(config, tokens.access_token, sub).then(
        () => null,
        (e: unknown) => e,
      );
      expect(bearer).toBeInstanceOf(oidc.WWWAuthenticateChallengeError);
      const challenge = (bearer as InstanceType<typeof oidc.WWWAuthenticateChallengeError>).cause[0];
      expect(challenge.scheme).toBe('dpop');
      expect(challenge.parameters.error).toBe('invalid_token');
      // and with a proof by another key
      const other = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
      const wrongKey = await oidc.fetchUserInfo(config, tokens.access_token, sub, { DPoP: other }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(wrongKey).toBeInstanceOf(oidc.WWWAuthenticateChallengeError);
    });

    it('oauth4webapi: a DPoP-bound token, userinfo with proofs; a replayed proof and a wrong htu are refused', async () => {
      const insecure = { [oauth.allowInsecureRequests]: true };
      const as = await oauth.processDiscoveryResponse(
        new URL(issuer),
        await oauth.discoveryRequest(new URL(issuer), insecure),
      );
      const client: import('oauth4webapi').Client = { client_id: dpopApp.app_id };
      const auth = oauth.ClientSecretBasic(dpopApp.client_secret);
      const keyPair = await oauth.generateKeyPair('EdDSA');
      const DPoP = oauth.DPoP(client, keyPair);
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        scope: 'openid',
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString();
      const { location } = await new Browser(issuer).signIn(url.toString(), user);
      const params = oauth.validateAuthResponse(as, client, new URL(location!), state);
      const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, {
        DPoP,
        ...insecure,
      });
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
      expect(tokens.token_type).toBe('dpop');
      const sub = oauth.getValidatedIdTokenClaims(tokens)!.sub;
      const info = await oauth.processUserInfoResponse(
        as,
        client,
        sub,
        await oauth.userInfoRequest(as, client, tokens.access_token, { DPoP, ...insecure }),
      );
      expect(info.sub).toBe(sub);

      // the same proof twice, and a proof for another URL, made with jose from the same key
      const jwk = await jose.exportJWK(keyPair.publicKey);
      const ath = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(tokens.access_token)));
      const proof = (htu: string) =>
        new jose.SignJWT({ htm: 'GET', htu, jti: crypto.randomUUID(), ath: ath.toString('base64url') })
          .setProtectedHeader({ alg: 'Ed25519', typ: 'dpop+jwt', jwk })
          .setIssuedAt()
          .sign(keyPair.privateKey);
      const call = (dpop: string) =>
        fetch(`${issuer}/userinfo`, { headers: { authorization: `DPoP ${tokens.access_token}`, dpop } });
      const once = await proof(`${issuer}/userinfo`);
      expect((await call(once)).status).toBe(200);
      const replayed = await call(once);
      expect(replayed.status).toBe(401);
      expect(replayed.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof".*already used/);
      const wrongHtu = await call(await proof(`${issuer}/token`));
      expect(wrongHtu.status).toBe(401);
      expect(wrongHtu.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof".*htu/);
    });

    it('refuses the code exchange without a proof (invalid_request), and a proof by a key other than dpop_jkt', async () => {
      const config = await discoverDpop();
      const first = await signIn(config);
      const refused = await oidc.authorizationCodeGrant(config, first.callback, first.checks).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(oidc.ResponseBodyError);
      expect((refused as InstanceType<typeof oidc.ResponseBodyError>).error).toBe('invalid_request');

      const named = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
      const second = await signIn(config, { dpop_jkt: await named.calculateThumbprint() });
      const other = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('PS256'));
      const wrong = await oidc
        .authorizationCodeGrant(config, second.callback, second.checks, undefined, {
          DPoP: other,
        })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(wrong).toBeInstanceOf(oidc.ResponseBodyError);
      expect((wrong as InstanceType<typeof oidc.ResponseBodyError>).error).toBe('invalid_dpop_proof');
    });
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
