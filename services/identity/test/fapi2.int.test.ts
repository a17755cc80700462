import http from 'node:http';
import request from 'supertest';
import { freePort } from '@attest/testing';
import { Browser } from './browser';
import { ADMIN_TOKEN, createUser, identityHarness, type IdentityHarness } from './support';

type OpenIdClient = typeof import('openid-client');
type OAuth = typeof import('oauth4webapi');
type Jose = typeof import('jose');
type Configuration = import('openid-client').Configuration;
type DPoPHandle = import('openid-client').DPoPHandle;
type Client = import('oauth4webapi').Client;
type PrivateKey = Awaited<ReturnType<Jose['generateKeyPair']>>['privateKey'];
type KeyPair = Awaited<ReturnType<OAuth['generateKeyPair']>>;

/** RFC 8252 §7.3: a native app's loopback redirect, the only http one the fapi2 profile takes. */
const REDIRECT_URI = 'http://127.0.0.1:3000/callback';
const PLAIN_REDIRECT_URI = 'http://localhost:3000/callback';
const CODE_TTL_SECONDS = 300;

/**
 * The FAPI 2.0 profile (issue 24) with real client libraries, openid-client and oauth4webapi, against the
 * service listening on a port (the harness's storage: embedded, or TEST_DATABASE_URL and TEST_REDIS_URL).
 */
describe('the fapi2 profile (FAPI 2.0): PAR, private_key_jwt, DPoP, PKCE S256', () => {
  let oidc: OpenIdClient;
  let oauth: OAuth;
  let jose: Jose;
  let h: IdentityHarness;
  let server: http.Server;
  let issuer: string;
  let user: { username: string; password: string };
  let keys: { privateKey: PrivateKey; publicJwk: Record<string, unknown> };
  let fapi: { app_id: string };
  let plain: { app_id: string; client_secret: string };

  const admin = (method: 'post' | 'patch' | 'get', path: string) =>
    request(h.adminApp)[method](`/admin${path}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
  const insecure = () => ({ [oauth.allowInsecureRequests]: true }) as const;

  beforeAll(async () => {
    oidc = await import('openid-client');
    oauth = await import('oauth4webapi');
    jose = await import('jose');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: issuer, CODE_TTL_SECONDS: String(CODE_TTL_SECONDS) });
    server = http.createServer(h.publicApp);
    await new Promise<void>((resolve) => server.listen(port, resolve));
    user = await createUser(h);
    const pair = await jose.generateKeyPair('PS256', { extractable: true });
    keys = {
      privateKey: pair.privateKey,
      publicJwk: { ...(await jose.exportJWK(pair.publicKey)), kid: 'fapi-ps256', use: 'sig', alg: 'PS256' },
    };
    const created = await admin('post', '/apps').send({
      name: 'FAPI bank',
      redirect_uris: [REDIRECT_URI],
      jwks: { keys: [keys.publicJwk] },
      profile: 'fapi2',
    });
    expect(created.status).toBe(201);
    fapi = created.body;
    const made = await admin('post', '/apps').send({ name: 'Plain app', redirect_uris: [PLAIN_REDIRECT_URI] });
    expect(made.status).toBe(201);
    plain = made.body;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await h?.close();
  });

  const discover = (): Promise<Configuration> =>
    oidc.discovery(
      new URL(issuer),
      fapi.app_id,
      { id_token_signed_response_alg: 'PS256' },
      oidc.PrivateKeyJwt({ key: keys.privateKey, kid: 'fapi-ps256' }),
      { execute: [oidc.allowInsecureRequests] },
    );

  /** openid-client's FAPI 2.0 sign-in: a DPoP-bound PAR with PKCE S256, the browser part, the code at /token. */
  async function signIn(config: Configuration, DPoP: DPoPHandle) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = await oidc.buildAuthorizationUrlWithPAR(
      config,
      {
        redirect_uri: REDIRECT_URI,
        scope: 'openid profile',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      },
      { DPoP },
    );
    const { location } = await new Browser(issuer).signIn(url.toString(), user);
    return { callback: new URL(location!), checks: { pkceCodeVerifier: verifier, expectedState: state } };
  }

  /** A code from a pushed request made by hand (oauth4webapi), for the refusals at /token. */
  async function pushedCode(verifier = oauth.generateRandomCodeVerifier()) {
    const as = await oauth.processDiscoveryResponse(
      new URL(issuer),
      await oauth.discoveryRequest(new URL(issuer), insecure()),
    );
    const client: Client = { client_id: fapi.app_id, id_token_signed_response_alg: 'PS256' };
    const auth = oauth.PrivateKeyJwt({ key: keys.privateKey, kid: 'fapi-ps256' });
    const pushed = await oauth.processPushedAuthorizationResponse(
      as,
      client,
      await oauth.pushedAuthorizationRequest(
        as,
        client,
        auth,
        {
          response_type: 'code',
          redirect_uri: REDIRECT_URI,
          scope: 'openid',
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        },
        insecure(),
      ),
    );
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({ client_id: fapi.app_id, request_uri: pushed.request_uri }).toString();
    const { location } = await new Browser(issuer).signIn(url.toString(), user);
    const params = oauth.validateAuthResponse(as, client, new URL(location!));
    return { as, client, auth, params, verifier };
  }

  it('is registered with what FAPI 2.0 requires, audited', async () => {
    const app = (await admin('get', `/apps/${fapi.app_id}`).expect(200)).body;
    expect(app).toMatchObject({
      profile: 'fapi2',
      token_endpoint_auth_method: 'private_key_jwt',
      require_pushed_authorization_requests: true,
      dpop_bound_access_tokens: true,
      id_token_signed_response_alg: 'PS256',
      redirect_uris: [REDIRECT_URI],
    });
    expect(app.client_secret).toBeUndefined();
    expect((await h.ctx.kernel.apps.find(fapi.app_id))!.secretHash).toBeNull();
    const audit = await admin('get', '/audit?type=app.created&limit=1000').expect(200);
    const event = (audit.body.events as { subject: string; detail: Record<string, unknown> }[]).find(
      (e) => e.subject === fapi.app_id,
    );
    expect(event?.detail).toMatchObject({
      profile: 'fapi2',
      token_endpoint_auth_method: 'private_key_jwt',
      dpop_bound_access_tokens: true,
      require_pushed_authorization_requests: true,
    });
  });

  it('openid-client signs in with PAR + private_key_jwt + DPoP + PKCE, and calls /userinfo with DPoP', async () => {
    const config = await discover();
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const set = jest.spyOn(h.storage.cache, 'set');
    let codeTtls: (number | undefined)[];
    let callback: URL;
    let checks: { pkceCodeVerifier: string; expectedState: string };
    try {
      ({ callback, checks } = await signIn(config, DPoP));
      codeTtls = set.mock.calls.filter(([key]) => key.startsWith('code:')).map(([, , ttl]) => ttl);
    } finally {
      set.mockRestore();
    }
    // RFC 9207: iss in the authorization response; the code lives 60 s, not CODE_TTL_SECONDS
    expect(callback.searchParams.get('iss')).toBe(issuer);
    expect(codeTtls).toEqual([60000]);
    const tokens = await oidc.authorizationCodeGrant(config, callback, checks, undefined, { DPoP });
    expect(tokens.token_type).toBe('dpop');
    expect(jose.decodeProtectedHeader(tokens.id_token!).alg).toBe('PS256');
    expect(jose.decodeJwt(tokens.access_token).cnf).toEqual({ jkt: await DPoP.calculateThumbprint() });
    const sub = tokens.claims()!.sub;
    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub, { DPoP });
    expect(info).toMatchObject({ sub, name: 'Ada Lovelace' });
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt: await DPoP.calculateThumbprint() },
    });
  });

  describe('refused', () => {
    let accessToken: string;
    let keyPair: KeyPair;
    let jwk: Record<string, unknown>;

    /** A /userinfo proof made with jose from the token's key: the claims a test gets wrong on purpose. */
    const userinfoProof = async (claims: Record<string, string> = {}) => {
      const ath = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(accessToken)));
      return new jose.SignJWT({
        htm: 'GET',
        htu: `${issuer}/userinfo`,
        jti: crypto.randomUUID(),
        ath: ath.toString('base64url'),
        ...claims,
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .setIssuedAt()
        .sign(keyPair.privateKey);
    };
    const userinfo = (headers: Record<string, string>) => fetch(`${issuer}/userinfo`, { headers });

    beforeAll(async () => {
      keyPair = await oauth.generateKeyPair('ES256');
      jwk = await jose.exportJWK(keyPair.publicKey);
      const { as, client, auth, params, verifier } = await pushedCode();
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, {
          DPoP: oauth.DPoP(client, keyPair),
          ...insecure(),
        }),
      );
      expect(tokens.token_type).toBe('dpop');
      accessToken = tokens.access_token;
    });

    it('a token request without a DPoP proof (no bearer token is issued); the code still works with one', async () => {
      const { as, client, auth, params, verifier } = await pushedCode();
      const bare = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        params,
        REDIRECT_URI,
        verifier,
        insecure(),
      );
      expect(bare.status).toBe(400);
      expect(await bare.json()).toMatchObject({
        error: 'invalid_request',
        error_description: 'This app requires a DPoP proof (DPoP header) at the token endpoint.',
      });
      const bound = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, {
        DPoP: oauth.DPoP(client, await oauth.generateKeyPair('ES256')),
        ...insecure(),
      });
      expect(bound.status).toBe(200);
      expect(((await bound.json()) as { token_type: string }).token_type).toBe('DPoP');
    });

    it('the access token used as a bearer token at /userinfo', async () => {
      const res = await oauth.userInfoRequest(
        await oauth.processDiscoveryResponse(
          new URL(issuer),
          await oauth.discoveryRequest(new URL(issuer), insecure()),
        ),
        { client_id: fapi.app_id },
        accessToken,
        insecure(),
      );
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(
        /^DPoP error="invalid_token", error_description="[^"]*DPoP-bound/,
      );
    });

    it('a missing proof at /userinfo', async () => {
      const res = await userinfo({ authorization: `DPoP ${accessToken}` });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof".*DPoP proof is required/);
    });

    it('a replayed proof', async () => {
      const proof = await userinfoProof();
      expect((await userinfo({ authorization: `DPoP ${accessToken}`, dpop: proof })).status).toBe(200);
      const replayed = await userinfo({ authorization: `DPoP ${accessToken}`, dpop: proof });
      expect(replayed.status).toBe(401);
      expect(replayed.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof".*already used/);
    });

    it('a proof with a wrong htu, at /userinfo and at /token', async () => {
      const res = await userinfo({
        authorization: `DPoP ${accessToken}`,
        dpop: await userinfoProof({ htu: `${issuer}/token` }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof".*htu/);

      const { as, client, auth, params, verifier } = await pushedCode();
      const wrongHtu = await new jose.SignJWT({ htm: 'POST', htu: `${issuer}/par`, jti: crypto.randomUUID() })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .setIssuedAt()
        .sign(keyPair.privateKey);
      const token = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, {
        ...insecure(),
        headers: { dpop: wrongHtu },
      });
      expect(token.status).toBe(400);
      expect(await token.json()).toMatchObject({
        error: 'invalid_dpop_proof',
        error_description: expect.stringMatching(/htu/),
      });
    });

    it('an unpushed request at /authorize: back at the app with invalid_request and iss', async () => {
      const config = await discover();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
        state: 'st-1',
      });
      const res = await fetch(url, { redirect: 'manual' });
      expect(res.status).toBe(302);
      const back = new URL(res.headers.get('location')!);
      expect(back.origin + back.pathname).toBe(REDIRECT_URI);
      expect(Object.fromEntries(back.searchParams)).toEqual({
        error: 'invalid_request',
        error_description: expect.stringMatching(/must push its authorization requests/),
        state: 'st-1',
        iss: issuer,
      });
    });

    it('a client assertion whose aud is the token endpoint (FAPI 2.0: the issuer only; issue 40, item 4)', async () => {
      const assertionFor = (aud: string, lifetime = '60s') =>
        new jose.SignJWT({ jti: crypto.randomUUID() })
          .setProtectedHeader({ alg: 'PS256', kid: 'fapi-ps256' })
          .setIssuer(fapi.app_id)
          .setSubject(fapi.app_id)
          .setAudience(aud)
          .setIssuedAt()
          .setExpirationTime(lifetime)
          .sign(keys.privateKey);
      const push = async (aud: string, lifetime?: string) =>
        request(h.publicApp)
          .post('/par')
          .type('form')
          .send({
            response_type: 'code',
            client_id: fapi.app_id,
            redirect_uri: REDIRECT_URI,
            scope: 'openid',
            code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
            code_challenge_method: 'S256',
            client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
            client_assertion: await assertionFor(aud, lifetime),
          });
      const toToken = await push(`${h.config.issuer}/token`);
      expect(toToken.status).toBe(401);
      expect(toToken.body).toMatchObject({
        error: 'invalid_client',
        error_description: `Invalid client_assertion: aud must be the issuer (${h.config.issuer}).`,
      });
      expect((await push(h.config.issuer)).status).toBe(201);
      // a fapi2 app's assertions live five minutes at most (other apps': an hour, Authlib's default)
      const hour = await push(h.config.issuer, '1h');
      expect(hour.status).toBe(401);
      expect(hour.body.error_description).toBe('Invalid client_assertion: exp must be at most 300 seconds ahead.');
    });

    it('client secret authentication at /par and /token: invalid_client (the app has no secret)', async () => {
      const as = await oauth.processDiscoveryResponse(
        new URL(issuer),
        await oauth.discoveryRequest(new URL(issuer), insecure()),
      );
      const client: Client = { client_id: fapi.app_id };
      const parameters = {
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
        code_challenge_method: 'S256',
      };
      for (const auth of [oauth.ClientSecretPost('sk_guessed'), oauth.ClientSecretBasic('sk_guessed')]) {
        const res = await oauth.pushedAuthorizationRequest(as, client, auth, parameters, insecure());
        expect(res.status).toBe(401);
        expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
      }
      const { params, verifier } = await pushedCode();
      const token = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic('sk_guessed'),
        params,
        REDIRECT_URI,
        verifier,
        { DPoP: oauth.DPoP(client, keyPair), ...insecure() },
      );
      expect(token.status).toBe(401);
      expect(((await token.json()) as { error: string }).error).toBe('invalid_client');
      expect((await h.ctx.kernel.apps.find(fapi.app_id))!.secretHash).toBeNull();
    });

    it.each([
      ['no PKCE', {}, 'invalid_request', /must send code_challenge with code_challenge_method=S256/],
      [
        'plain PKCE',
        { code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' },
        'invalid_request',
        /code_challenge_method must be S256/,
      ],
      [
        'a response type other than code',
        {
          response_type: 'code id_token',
          nonce: 'n-1',
          code_challenge: 'x'.repeat(43),
          code_challenge_method: 'S256',
        },
        'unauthorized_client',
        /may use only response_type=code/,
      ],
    ])('%s at /par', async (_name, extra, error, description) => {
      const as = await oauth.processDiscoveryResponse(
        new URL(issuer),
        await oauth.discoveryRequest(new URL(issuer), insecure()),
      );
      const client: Client = { client_id: fapi.app_id };
      const res = await oauth.pushedAuthorizationRequest(
        as,
        client,
        oauth.PrivateKeyJwt({ key: keys.privateKey, kid: 'fapi-ps256' }),
        { response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'openid', ...extra },
        { DPoP: oauth.DPoP(client, keyPair), ...insecure() },
      );
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error, error_description: expect.stringMatching(description) });
    });
  });

  describe('registration', () => {
    const fapiApp = (extra: Record<string, unknown> = {}) =>
      admin('post', '/apps').send({
        name: 'Another bank',
        redirect_uris: ['https://bank.example/cb'],
        jwks: { keys: [keys.publicJwk] },
        profile: 'fapi2',
        ...extra,
      });

    it.each([
      [{ redirect_uris: [PLAIN_REDIRECT_URI] }, 'redirect_uris', /must use https under the fapi2 profile/],
      [{ redirect_uris: ['http://bank.example/cb'] }, 'redirect_uris.0', /must use https/],
      [{ token_endpoint_auth_method: 'client_secret_basic' }, 'token_endpoint_auth_method', /private_key_jwt/],
      [{ token_endpoint_auth_method: 'none' }, 'token_endpoint_auth_method', /private_key_jwt/],
      [{ require_pushed_authorization_requests: false }, 'require_pushed_authorization_requests', /true/],
      [{ dpop_bound_access_tokens: false }, 'dpop_bound_access_tokens', /true/],
      [{ id_token_signed_response_alg: 'RS256' }, 'id_token_signed_response_alg', /PS256 or ES256/],
      [{ jwks: undefined }, 'jwks', /needs its public keys/],
    ])('refuses %j: 400 invalid_parameter naming %s, and no app is made', async (extra, attribute, detail) => {
      const before = (await h.ctx.kernel.apps.list({ limit: 100000 })).length;
      const res = await fapiApp(extra);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_parameter', attribute, detail: expect.stringMatching(detail) });
      expect((await h.ctx.kernel.apps.list({ limit: 100000 })).length).toBe(before);
    });

    it('takes ES256 id_tokens, and the loopback redirect URI of a native app', async () => {
      const res = await fapiApp({ id_token_signed_response_alg: 'ES256', redirect_uris: ['http://[::1]:8080/cb'] });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ profile: 'fapi2', id_token_signed_response_alg: 'ES256' });
    });

    it('an update under the profile: loosening a setting or an http redirect URI is refused and nothing changes', async () => {
      for (const [body, attribute] of [
        [{ redirect_uris: [PLAIN_REDIRECT_URI] }, 'redirect_uris'],
        [{ dpop_bound_access_tokens: false }, 'dpop_bound_access_tokens'],
        [{ token_endpoint_auth_method: 'client_secret_post' }, 'token_endpoint_auth_method'],
        [{ id_token_signed_response_alg: 'RS256', name: 'Renamed' }, 'id_token_signed_response_alg'],
      ] as const) {
        const res = await admin('patch', `/apps/${fapi.app_id}`).send(body);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'invalid_parameter', attribute });
      }
      expect((await admin('get', `/apps/${fapi.app_id}`)).body).toMatchObject({
        name: 'FAPI bank',
        profile: 'fapi2',
        redirect_uris: [REDIRECT_URI],
        dpop_bound_access_tokens: true,
        token_endpoint_auth_method: 'private_key_jwt',
        id_token_signed_response_alg: 'PS256',
      });
    });

    it('an app with a secret takes the profile by update: its secret ends, its settings are set, audited; none lifts it', async () => {
      const made = await admin('post', '/apps').send({
        name: 'Moving bank',
        redirect_uris: ['https://moving.example/cb'],
      });
      const id = made.body.app_id as string;
      expect((await admin('patch', `/apps/${id}`).send({ profile: 'fapi2' })).body).toMatchObject({
        code: 'invalid_parameter',
        attribute: 'jwks',
      });
      const moved = await admin('patch', `/apps/${id}`).send({ profile: 'fapi2', jwks: { keys: [keys.publicJwk] } });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({
        profile: 'fapi2',
        token_endpoint_auth_method: 'private_key_jwt',
        require_pushed_authorization_requests: true,
        dpop_bound_access_tokens: true,
        id_token_signed_response_alg: 'PS256',
      });
      expect((await h.ctx.kernel.apps.find(id))!.secretHash).toBeNull();
      const audit = await admin('get', '/audit?type=app.updated&limit=1000').expect(200);
      const event = (audit.body.events as { subject: string; detail: Record<string, unknown> }[]).find(
        (e) => e.subject === id && e.detail.profile === 'fapi2',
      );
      expect(event?.detail).toMatchObject({
        changed: ['profile', 'jwks'],
        profile: 'fapi2',
        profile_settings: {
          token_endpoint_auth_method: 'private_key_jwt',
          require_pushed_authorization_requests: true,
          dpop_bound_access_tokens: true,
          id_token_signed_response_alg: 'PS256',
        },
      });
      const lifted = await admin('patch', `/apps/${id}`).send({ profile: 'none' });
      expect(lifted.body).toMatchObject({ profile: 'none', dpop_bound_access_tokens: true });
      const loosened = await admin('patch', `/apps/${id}`).send({ dpop_bound_access_tokens: false });
      expect(loosened.status).toBe(200);
      expect(loosened.body.dpop_bound_access_tokens).toBe(false);
    });

    it('a public client cannot take the profile', async () => {
      const made = await admin('post', '/apps').send({
        name: 'SPA',
        redirect_uris: ['https://spa.example/cb'],
        token_endpoint_auth_method: 'none',
      });
      const res = await admin('patch', `/apps/${made.body.app_id}`).send({ profile: 'fapi2' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_parameter', attribute: 'profile' });
    });
  });

  it('an app without the profile is as before: unpushed, no PKCE, a hybrid response, a client secret, Bearer tokens, CODE_TTL_SECONDS', async () => {
    const config = await oidc.discovery(
      new URL(issuer),
      plain.app_id,
      undefined,
      oidc.ClientSecretBasic(plain.client_secret),
      { execute: [oidc.allowInsecureRequests] },
    );
    expect((await admin('get', `/apps/${plain.app_id}`)).body).toMatchObject({
      profile: 'none',
      token_endpoint_auth_method: 'client_secret_basic',
      dpop_bound_access_tokens: false,
      require_pushed_authorization_requests: false,
      id_token_signed_response_alg: 'RS256',
    });
    oidc.useCodeIdTokenResponseType(config);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: PLAIN_REDIRECT_URI,
      scope: 'openid profile',
      state,
      nonce,
      response_mode: 'form_post',
    });
    const set = jest.spyOn(h.storage.cache, 'set');
    let formPost: { action: string; fields: Record<string, string> } | undefined;
    let codeTtls: (number | undefined)[];
    try {
      ({ formPost } = await new Browser(issuer).signIn(url.toString(), user));
      codeTtls = set.mock.calls.filter(([key]) => key.startsWith('code:')).map(([, , ttl]) => ttl);
    } finally {
      set.mockRestore();
    }
    expect(codeTtls).toEqual([CODE_TTL_SECONDS * 1000]);
    const callback = new Request(PLAIN_REDIRECT_URI, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(formPost!.fields).toString(),
    });
    const tokens = await oidc.authorizationCodeGrant(config, callback, { expectedState: state, expectedNonce: nonce });
    expect(tokens.token_type).toBe('bearer');
    expect(jose.decodeProtectedHeader(tokens.id_token!).alg).toBe('RS256');
    expect(jose.decodeJwt(tokens.access_token).cnf).toBeUndefined();
    const sub = tokens.claims()!.sub;
    expect(await oidc.fetchUserInfo(config, tokens.access_token, sub)).toMatchObject({ sub, name: 'Ada Lovelace' });
  });
});
