/** Starts the oidc-provider reference (its own pinned process) and signs in once to get a session and tokens. */
import { randomBytes } from 'node:crypto';
import { freePort } from '../../packages/common/test/support/throwaway';
import { dpopKey, dpopProof, type DpopKey } from '../dpop';
import { basicAuth, CookieJar, codeFrom, expectJson, form, pkce } from '../http';
import { startServer, waitReady, type ServerProcess } from '../server';
import type { Pinning } from '../system';

export const PEER_REDIRECT_URI = 'http://localhost:3000/callback';
export const PEER_RESOURCE = 'urn:attest-bench:api';
/**
 * The round trips' resource (signin, par): oidc-provider issues a JWT access token only for a resource, ours
 * without one too (RS256, aud the issuer). Its tokens stay RS256 as ours there, while PEER_RESOURCE's are ES256
 * as the bench resource's in ours (client-credentials, refresh, token-exchange; bench/README.md).
 */
export const PEER_ROUND_TRIP_RESOURCE = 'urn:attest-bench:round-trip';

/** A resource: none (false), PEER_RESOURCE (true), or the one named. */
const resourceOf = (resource: boolean | string): string | undefined =>
  resource === true ? PEER_RESOURCE : resource === false ? undefined : resource;
export const PEER_SCOPE = 'openid email';

export interface OidcPeer {
  server: ServerProcess;
  origin: string;
  clientId: string;
  clientSecret: string;
  sessionCookie: string;
  pkce: { verifier: string; challenge: string };
  /** Opaque access token (no resource): what oidc-provider accepts at /me and /token/introspection. */
  opaqueAccessToken: string;
  /** A DPoP-bound opaque access token and its key (features.dpop), for the userinfo-dpop row. */
  dpop: { key: DpopKey; accessToken: string };
  /** A JWT access token of the person for the resource: the token-exchange row's subject token (issue 42). */
  resourceAccessToken: string;
  /** A refresh token of a new grant (offline_access with prompt=consent, for the resource), as a sign-in gets it. */
  newRefreshToken(): Promise<string>;
  /** The CIBA client (poll mode; same secret): oidc-provider's pairwise CIBA clients need a sector_identifier_uri. */
  cibaClientId: string;
  /** A new CIBA request (POST /backchannel, poll mode) for the bench account, waiting 30 minutes: its auth_req_id. */
  newCibaRequest(): Promise<string>;
  stop(): Promise<void>;
}

/** /auth for the round trip: a JWT access token for the resource (oidc-provider issues JWTs only for a resource server). */
export function peerAuthorizePath(peer: Pick<OidcPeer, 'clientId' | 'pkce'>, resource: boolean | string): string {
  const uri = resourceOf(resource);
  return `/auth?${form({
    response_type: 'code',
    scope: uri ? `${PEER_SCOPE} api:read` : PEER_SCOPE,
    client_id: peer.clientId,
    redirect_uri: PEER_REDIRECT_URI,
    code_challenge: peer.pkce.challenge,
    code_challenge_method: 'S256',
    ...(uri ? { resource: uri } : {}),
  })}`;
}

/** The round trip's request (with its resource: JWT access tokens) pushed to /request, oidc-provider's PAR endpoint. */
export function peerParBody(peer: Pick<OidcPeer, 'clientId' | 'pkce'>): string {
  return form({
    response_type: 'code',
    client_id: peer.clientId,
    scope: `${PEER_SCOPE} api:read`,
    redirect_uri: PEER_REDIRECT_URI,
    code_challenge: peer.pkce.challenge,
    code_challenge_method: 'S256',
    resource: PEER_ROUND_TRIP_RESOURCE,
  });
}

/** /auth for a refresh token: offline_access, which oidc-provider keeps only with prompt=consent (OIDC Core §11). */
export function peerRefreshAuthorizePath(peer: Pick<OidcPeer, 'clientId' | 'pkce'>): string {
  return `/auth?${form({
    response_type: 'code',
    scope: `${PEER_SCOPE} offline_access api:read`,
    prompt: 'consent',
    client_id: peer.clientId,
    redirect_uri: PEER_REDIRECT_URI,
    code_challenge: peer.pkce.challenge,
    code_challenge_method: 'S256',
    resource: PEER_RESOURCE,
  })}`;
}

export function peerTokenBody(peer: Pick<OidcPeer, 'pkce'>, code: string, resource: boolean | string): string {
  const uri = resourceOf(resource);
  return form({
    grant_type: 'authorization_code',
    code,
    redirect_uri: PEER_REDIRECT_URI,
    code_verifier: peer.pkce.verifier,
    ...(uri ? { resource: uri } : {}),
  });
}

/** Follows redirects within the provider (carrying cookies) until it sends the browser back to the app. */
async function authorize(origin: string, jar: CookieJar, path: string): Promise<string> {
  let url = `${origin}${path}`;
  for (let i = 0; i < 8; i++) {
    const res = await jar.fetch(url);
    const body = await res.text();
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location)
      throw new Error(`oidc-provider ${url}: ${res.status} ${body.slice(0, 300)}`);
    const next = new URL(location, url);
    if (process.env.BENCH_DEBUG)
      process.stderr.write(`${res.status} ${url} -> ${location} ${JSON.stringify(res.headers.getSetCookie())}\n`);
    if (next.origin !== origin) {
      const { code, problem } = codeFrom(next.toString());
      if (!code) throw new Error(`oidc-provider redirect without a code (${problem}): ${location}`);
      return code;
    }
    url = next.toString();
  }
  throw new Error('oidc-provider: too many redirects');
}

export async function startOidcPeer(pinning: Pinning, logDir: string): Promise<OidcPeer> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const clientId = 'bench-client';
  const clientSecret = randomBytes(24).toString('base64url');
  const server = startServer(
    pinning,
    'oidc-provider',
    'bench/peers/oidc-provider-server.ts',
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PEER_PORT: String(port),
      PEER_ISSUER: origin,
      PEER_CLIENT_ID: clientId,
      PEER_CLIENT_SECRET: clientSecret,
      PEER_REDIRECT_URI,
      PEER_RESOURCE,
      PEER_ROUND_TRIP_RESOURCE,
      ...(process.env.BENCH_DEBUG ? { BENCH_DEBUG: process.env.BENCH_DEBUG } : {}),
    },
    logDir,
  );
  try {
    await waitReady(server, `${origin}/.well-known/openid-configuration`);
    const jar = new CookieJar();
    const pair = pkce();
    const base = { clientId, pkce: pair };
    // once through the interaction (programmatic sign-in + consent), then the session alone suffices
    await authorize(origin, jar, peerAuthorizePath(base, true));
    const exchange = async (code: string, headers: Record<string, string> = {}, resource = false) =>
      expectJson<{ access_token: string; token_type: string; refresh_token?: string }>(
        await fetch(`${origin}/token`, {
          method: 'POST',
          headers: {
            authorization: basicAuth(clientId, clientSecret),
            'content-type': 'application/x-www-form-urlencoded',
            ...headers,
          },
          body: peerTokenBody(base, code, resource),
        }),
        'oidc-provider /token',
      );
    // each through the interaction (prompt=consent), finished in code like the first sign-in. Each makes a new
    // grant, and oidc-provider then drops the session's earlier grant with its tokens: the first is asked for here,
    // before the tokens below (the /introspect and /userinfo rows' token, the token exchange's subject token), and
    // the refresh row, which asks for more, runs last (run.ts, cpu-time.ts). Asked for after them, it left
    // oidc-provider answering those rows `active: false` and 401.
    const newRefreshToken = async () => {
      const { refresh_token } = await exchange(await authorize(origin, jar, peerRefreshAuthorizePath(base)), {}, true);
      if (!refresh_token) throw new Error('oidc-provider /token with offline_access: no refresh_token');
      return refresh_token;
    };
    await newRefreshToken();
    const tokens = await exchange(await authorize(origin, jar, peerAuthorizePath(base, false)));
    const key = dpopKey();
    const bound = await exchange(await authorize(origin, jar, peerAuthorizePath(base, false)), {
      dpop: dpopProof(key, 'POST', `${origin}/token`),
    });
    if (bound.token_type !== 'DPoP') throw new Error(`oidc-provider /token with DPoP: token_type ${bound.token_type}`);
    const forResource = expectJson<{ access_token: string }>(
      await fetch(`${origin}/token`, {
        method: 'POST',
        headers: {
          authorization: basicAuth(clientId, clientSecret),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: peerTokenBody(base, await authorize(origin, jar, peerAuthorizePath(base, true)), true),
      }),
      'oidc-provider /token (resource)',
    );
    const resourceAccessToken = (await forResource).access_token;
    const cibaClientId = `${clientId}-ciba`;
    const newCibaRequest = async () =>
      (
        await expectJson<{ auth_req_id: string }>(
          await fetch(`${origin}/backchannel`, {
            method: 'POST',
            headers: {
              authorization: basicAuth(cibaClientId, clientSecret),
              'content-type': 'application/x-www-form-urlencoded',
            },
            // the account's id: the CIBA client's subjects are public
            body: form({ scope: 'openid', login_hint: 'bench', binding_message: 'bench', requested_expiry: '1800' }),
          }),
          'oidc-provider /backchannel',
        )
      ).auth_req_id;
    await newCibaRequest();
    return {
      newRefreshToken,
      newCibaRequest,
      cibaClientId,
      server,
      origin,
      clientId,
      clientSecret,
      sessionCookie: jar.header('_session'),
      pkce: pair,
      opaqueAccessToken: tokens.access_token,
      dpop: { key, accessToken: bound.access_token },
      resourceAccessToken,
      stop: () => server.stop(),
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}
