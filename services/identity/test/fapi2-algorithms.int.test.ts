import http from 'node:http';
import request from 'supertest';
import { freePort } from '@attest/testing';
import { Browser } from './browser';
import { ADMIN_TOKEN, createUser, identityHarness, type IdentityHarness } from './support';

type OpenIdClient = typeof import('openid-client');
type OAuth = typeof import('oauth4webapi');
type Jose = typeof import('jose');
type AuthorizationServer = import('oauth4webapi').AuthorizationServer;
type PrivateKey = Awaited<ReturnType<Jose['generateKeyPair']>>['privateKey'];
type KeyPair = Awaited<ReturnType<OAuth['generateKeyPair']>>;
type Client = import('oauth4webapi').Client;

const REDIRECT_URI = 'http://127.0.0.1:3000/callback';

/**
 * Issue 40, item 5: FAPI 2.0 §5.4 allows PS256, ES256 and EdDSA only. A fapi2 app's RS256 client
 * assertions and RS256 DPoP proofs are refused with a clear error; its access tokens are PS256 (its
 * default) or ES256 (its choice, access_token_signed_response_alg). Other apps are unchanged. Real
 * clients (openid-client, oauth4webapi, jose) against the service on a port (either backend).
 */
describe('the fapi2 profile’s algorithms (issue 40, item 5)', () => {
  let oidc: OpenIdClient;
  let oauth: OAuth;
  let jose: Jose;
  let h: IdentityHarness;
  let server: http.Server;
  let issuer: string;
  let as: AuthorizationServer;
  let user: { username: string; password: string };
  const keys: Partial<Record<'RS256' | 'PS256' | 'ES256', PrivateKey>> = {};
  let fapi: { app_id: string };
  let plain: { app_id: string };

  const admin = (method: 'post' | 'patch' | 'get', path: string) =>
    request(h.adminApp)[method](`/admin${path}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
  const insecure = () => ({ [oauth.allowInsecureRequests]: true }) as const;
  const auth = (alg: 'RS256' | 'PS256' | 'ES256') => oauth.PrivateKeyJwt({ key: keys[alg]!, kid: `k-${alg}` });

  beforeAll(async () => {
    oidc = await import('openid-client');
    oauth = await import('oauth4webapi');
    jose = await import('jose');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: issuer });
    server = http.createServer(h.publicApp);
    await new Promise<void>((resolve) => server.listen(port, resolve));
    user = await createUser(h);
    const jwks = [];
    for (const alg of ['RS256', 'PS256', 'ES256'] as const) {
      const pair = await jose.generateKeyPair(alg, { extractable: true });
      keys[alg] = pair.privateKey;
      jwks.push({ ...(await jose.exportJWK(pair.publicKey)), kid: `k-${alg}`, use: 'sig', alg });
    }
    const created = await admin('post', '/apps').send({
      name: 'FAPI bank',
      redirect_uris: [REDIRECT_URI],
      jwks: { keys: jwks },
      profile: 'fapi2',
    });
    expect(created.status).toBe(201);
    fapi = created.body;
    const made = await admin('post', '/apps').send({
      name: 'Keyed app',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: jwks },
    });
    expect(made.status).toBe(201);
    plain = made.body;
    as = await oauth.processDiscoveryResponse(
      new URL(issuer),
      await oauth.discoveryRequest(new URL(issuer), insecure()),
    );
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await h?.close();
  });

  const push = async (appId: string, clientAlg: 'RS256' | 'PS256' | 'ES256', dpop?: KeyPair, scope = 'openid') => {
    const verifier = oauth.generateRandomCodeVerifier();
    const client: Client = { client_id: appId };
    const res = await oauth.pushedAuthorizationRequest(
      as,
      client,
      auth(clientAlg),
      {
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      { ...insecure(), ...(dpop ? { DPoP: oauth.DPoP(client, dpop) } : {}) },
    );
    return { res, verifier, client };
  };

  /** A pushed sign-in's code (PS256 assertion, no DPoP at /par), for the token requests. */
  const code = async (appId: string, scope?: string) => {
    const { res, verifier, client } = await push(appId, 'PS256', undefined, scope);
    expect(res.status).toBe(201);
    const { request_uri } = (await res.json()) as { request_uri: string };
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({ client_id: appId, request_uri }).toString();
    const { location } = await new Browser(issuer).signIn(url.toString(), user);
    return { params: oauth.validateAuthResponse(as, client, new URL(location!)), verifier, client };
  };

  it('registers access_token_signed_response_alg PS256 by default, ES256 by choice, RS256 refused under fapi2', async () => {
    expect((await admin('get', `/apps/${fapi.app_id}`).expect(200)).body).toMatchObject({
      access_token_signed_response_alg: 'PS256',
    });
    expect((await admin('get', `/apps/${plain.app_id}`).expect(200)).body).toMatchObject({
      access_token_signed_response_alg: 'RS256',
    });
    const refused = await admin('patch', `/apps/${fapi.app_id}`).send({ access_token_signed_response_alg: 'RS256' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 'invalid_parameter',
      attribute: 'access_token_signed_response_alg',
      detail: expect.stringContaining('PS256 or ES256'),
    });
  });

  it('refuses an RS256 client assertion of a fapi2 app (openid-client, oauth4webapi), and takes PS256 and ES256', async () => {
    const rs = await push(fapi.app_id, 'RS256');
    expect(rs.res.status).toBe(401);
    expect(await rs.res.json()).toMatchObject({
      error: 'invalid_client',
      error_description: expect.stringContaining(
        'this app (FAPI 2.0 profile) must sign its client assertions with PS256, ES256 or EdDSA; RS256 is refused',
      ),
    });
    const config = await oidc.discovery(
      new URL(issuer),
      fapi.app_id,
      undefined,
      oidc.PrivateKeyJwt({ key: keys.RS256!, kid: 'k-RS256' }),
      { execute: [oidc.allowInsecureRequests] },
    );
    // openid-client: the 401's challenge, and the error naming the algorithm
    const refused = (await oidc
      .buildAuthorizationUrlWithPAR(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      })
      .catch((err: unknown) => err)) as { status: number; response: Response };
    expect(refused.status).toBe(401);
    expect(await refused.response.json()).toMatchObject({
      error: 'invalid_client',
      error_description: expect.stringContaining('RS256 is refused'),
    });
    for (const alg of ['PS256', 'ES256'] as const) expect((await push(fapi.app_id, alg)).res.status).toBe(201);
    // an app outside the profile: RS256 as before
    expect((await push(plain.app_id, 'RS256')).res.status).toBe(201);
  });

  it('refuses an RS256 DPoP proof of a fapi2 app at /par and /token, and takes PS256 and ES256', async () => {
    const rsPair = await oauth.generateKeyPair('RS256');
    const atPar = await push(fapi.app_id, 'PS256', rsPair);
    expect(atPar.res.status).toBe(400);
    expect(await atPar.res.json()).toMatchObject({
      error: 'invalid_dpop_proof',
      error_description: expect.stringContaining('for this app (FAPI 2.0 profile); RS256 is refused'),
    });
    for (const alg of ['PS256', 'ES256'] as const)
      expect((await push(fapi.app_id, 'PS256', await oauth.generateKeyPair(alg))).res.status).toBe(201);

    const { params, verifier, client } = await code(fapi.app_id);
    const atToken = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth('ES256'),
      params,
      REDIRECT_URI,
      verifier,
      {
        DPoP: oauth.DPoP(client, rsPair),
        ...insecure(),
      },
    );
    expect(atToken.status).toBe(400);
    expect(await atToken.json()).toMatchObject({
      error: 'invalid_dpop_proof',
      error_description: expect.stringContaining('RS256 is refused'),
    });
    // the code was not spent: a PS256 proof redeems it
    const psPair = await oauth.generateKeyPair('PS256');
    const good = await oauth.authorizationCodeGrantRequest(as, client, auth('ES256'), params, REDIRECT_URI, verifier, {
      DPoP: oauth.DPoP(client, psPair),
      ...insecure(),
    });
    expect(good.status).toBe(200);
    // an app outside the profile still takes an RS256 proof
    const other = await push(plain.app_id, 'RS256', rsPair);
    expect(other.res.status).toBe(201);
  });

  it('refuses an RS256 DPoP proof of a fapi2 app at the refresh_token grant too, and takes its PS256 key', async () => {
    const { params, verifier, client } = await code(fapi.app_id, 'openid offline_access');
    const psPair = await oauth.generateKeyPair('PS256');
    const issued = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth('ES256'),
      params,
      REDIRECT_URI,
      verifier,
      {
        DPoP: oauth.DPoP(client, psPair),
        ...insecure(),
      },
    );
    expect(issued.status).toBe(200);
    const { refresh_token } = (await issued.json()) as { refresh_token?: string };
    expect(refresh_token).toEqual(expect.any(String));
    const rsPair = await oauth.generateKeyPair('RS256');
    const refused = await oauth.refreshTokenGrantRequest(as, client, auth('ES256'), refresh_token!, {
      DPoP: oauth.DPoP(client, rsPair),
      ...insecure(),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: 'invalid_dpop_proof',
      error_description: expect.stringContaining('for this app (FAPI 2.0 profile); RS256 is refused'),
    });
    // refused before the token was looked at: the family goes on with the key it is bound to
    const refreshed = await oauth.refreshTokenGrantRequest(as, client, auth('ES256'), refresh_token!, {
      DPoP: oauth.DPoP(client, psPair),
      ...insecure(),
    });
    expect(refreshed.status).toBe(200);
  });

  it('signs a fapi2 app’s access tokens PS256, or ES256 once chosen (openid-client); /userinfo and /introspect take them', async () => {
    const signIn = async () => {
      const config = await oidc.discovery(
        new URL(issuer),
        fapi.app_id,
        { id_token_signed_response_alg: 'PS256' },
        oidc.PrivateKeyJwt({ key: keys.ES256!, kid: 'k-ES256' }),
        { execute: [oidc.allowInsecureRequests] },
      );
      const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
      const verifierValue = oidc.randomPKCECodeVerifier();
      const url = await oidc.buildAuthorizationUrlWithPAR(
        config,
        {
          redirect_uri: REDIRECT_URI,
          scope: 'openid profile',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifierValue),
          code_challenge_method: 'S256',
        },
        { DPoP },
      );
      const { location } = await new Browser(issuer).signIn(url.toString(), user);
      const tokens = await oidc.authorizationCodeGrant(
        config,
        new URL(location!),
        { pkceCodeVerifier: verifierValue },
        undefined,
        { DPoP },
      );
      const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub, { DPoP });
      expect(info.sub).toBe(tokens.claims()!.sub);
      expect(await oidc.tokenIntrospection(config, tokens.access_token)).toMatchObject({ active: true });
      return tokens.access_token;
    };
    const jwks = jose.createLocalJWKSet((await request(h.publicApp).get('/jwks').expect(200)).body);
    const ps = await signIn();
    expect(jose.decodeProtectedHeader(ps)).toMatchObject({ alg: 'PS256', typ: 'at+jwt' });
    await expect(jose.jwtVerify(ps, jwks, { issuer, algorithms: ['PS256'] })).resolves.toBeTruthy();
    await admin('patch', `/apps/${fapi.app_id}`).send({ access_token_signed_response_alg: 'ES256' }).expect(200);
    const es = await signIn();
    expect(jose.decodeProtectedHeader(es)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    await expect(jose.jwtVerify(es, jwks, { issuer, algorithms: ['ES256'] })).resolves.toBeTruthy();
  });
});
