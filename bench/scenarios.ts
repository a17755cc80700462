/**
 * The scenarios, each as a workload against Attest and, for the identity rows, against oidc-provider;
 * plus the Express floor. Every check looks at the status and the body (and Location for redirects).
 */
import { dpopProof } from './dpop';
import { basicAuth, codeFrom, form } from './http';
import type { Check, Headers, Step, Workload } from './drive';
import {
  peerAuthorizePath,
  peerParBody,
  peerTokenBody,
  PEER_REDIRECT_URI,
  PEER_RESOURCE,
  PEER_ROUND_TRIP_RESOURCE,
  type OidcPeer,
} from './peers/oidc-provider';
import { authorizePath, bulkTransactionId, parBody, REDIRECT_URI, type AttestSeed } from './seed';
import type { ServiceName } from './stack';

export interface AttestTarget {
  origins: Record<ServiceName, string>;
  /** The issuer the services announce (BASE_URL). */
  issuer: string;
  seed: AttestSeed;
  /** Size of the rotating set of uncached transactions (tag 1). */
  missSet: number;
  /** Size of the rotating set for the growth rows (tag 2, mined). */
  growthSet: number;
}

export type Reference = 'floor' | 'oidc-provider' | 'none';

export interface Scenario {
  key: string;
  name: string;
  unit: 'request' | 'trip';
  attest(t: AttestTarget): Workload;
  oidc?(p: OidcPeer): Workload;
  /**
   * What the embedded row is compared with, and the targets (issue #10); `minHttpRatio`: the target
   * against Node's plain `http` hello world (issue #28), measured in turn with the row.
   */
  embedded: {
    reference: Reference;
    minRatio?: number;
    maxP99Ms?: number;
    minHttpRatio?: number;
    /** A rate to reach, per second, on the one server core (a row with no reference to compare with). */
    minRate?: number;
  };
  real: { reference: Reference; minRatio?: number; minHttpRatio?: number };
  /** Only run with --growth. */
  growthOnly?: boolean;
}

type Json = Record<string, unknown>;

/** 200 + a JSON body that passes `ok` (which names what is wrong, or returns null). */
function json(ok: (body: Json, headers: Headers) => string | null, status = 200): Check {
  return (got, body, headers) => {
    if (got !== status) return `status ${got}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return 'body is not JSON';
    }
    if (typeof parsed !== 'object' || parsed === null) return 'body is not a JSON object';
    return ok(parsed as Json, headers);
  };
}

const isJwt = (v: unknown) => typeof v === 'string' && /^[\w-]+\.[\w-]+\.[\w-]+$/.test(v);

function redirectWithCode(redirectUri: string): Check {
  return (status, _body, headers, state) => {
    if (status !== 302 && status !== 303) return `status ${status}`;
    const location = headers.location;
    if (!location?.startsWith(`${redirectUri}?`)) return 'Location is not the redirect URI';
    const { code, problem } = codeFrom(location);
    if (!code) return problem ?? 'no code';
    state.code = code;
    return null;
  };
}

const tokenResponse = json((b) =>
  !isJwt(b.access_token)
    ? 'access_token is not a JWT'
    : !isJwt(b.id_token)
      ? 'no id_token'
      : String(b.token_type).toLowerCase() !== 'bearer'
        ? 'token_type is not Bearer'
        : null,
);

/** RFC 9126 §2.2: 201 with a request_uri, kept for the /authorize step (cleared when it is not there). */
const pushedCheck: Check = (status, body, headers, state) => {
  state.requestUri = undefined;
  state.code = undefined;
  const pushed = (b: Json) =>
    typeof b.request_uri !== 'string' || !b.request_uri.startsWith('urn:ietf:params:oauth:request_uri:')
      ? 'no request_uri'
      : typeof b.expires_in !== 'number'
        ? 'no expires_in'
        : null;
  const problem = json(pushed, 201)(status, body, headers, state);
  if (!problem) state.requestUri = (JSON.parse(body) as Json).request_uri as string;
  return problem;
};

/** The PAR round trip: push (Basic), /authorize with the request_uri and the session, then /token. */
function parTrip(a: {
  origin: string;
  parPath: string;
  authorizePath: string;
  clientId: string;
  auth: string;
  parBody: string;
  sessionCookie: string;
  redirectUri: string;
  tokenBody: (code: string) => string;
}): Workload {
  return {
    origin: a.origin,
    unit: 'trip',
    steps: [
      { method: 'POST', path: a.parPath, headers: formHeaders(a.auth), body: a.parBody, check: pushedCheck },
      {
        ...get(a.authorizePath, redirectWithCode(a.redirectUri), { cookie: a.sessionCookie }),
        prepare: (state) =>
          state.requestUri
            ? { path: `${a.authorizePath}?${form({ client_id: a.clientId, request_uri: String(state.requestUri) })}` }
            : null,
      },
      {
        method: 'POST',
        path: '/token',
        headers: formHeaders(a.auth),
        prepare: (state) => (state.code ? { body: a.tokenBody(String(state.code)) } : null),
        check: tokenResponse,
      },
    ],
  };
}

const discoveryCheck = (issuer: string) =>
  json((b) => (b.issuer !== issuer ? 'wrong issuer' : typeof b.jwks_uri !== 'string' ? 'no jwks_uri' : null));
// public keys only, RSA (the ID tokens' RS256) and EC (ES256, the bench resource's access tokens on both sides)
const publicKey = (k: Json) =>
  typeof k.kid === 'string' &&
  k.d === undefined &&
  ((k.kty === 'RSA' && typeof k.n === 'string' && typeof k.e === 'string') ||
    (k.kty === 'EC' && typeof k.crv === 'string' && typeof k.x === 'string' && typeof k.y === 'string'));
const jwksCheck = json((b) =>
  Array.isArray(b.keys) && (b.keys as Json[]).some((k) => k.kty === 'RSA') && (b.keys as Json[]).every(publicKey)
    ? null
    : 'not a JWKS of public RSA and EC keys with an RSA key',
);
const activeCheck = (clientId: string) =>
  json((b) =>
    b.active !== true
      ? 'not active'
      : b.client_id !== clientId
        ? 'wrong client_id'
        : typeof b.sub !== 'string'
          ? 'no sub'
          : null,
  );
const userinfoCheck = json((b) =>
  typeof b.sub === 'string' && b.sub.length > 0 && typeof b.email === 'string' ? null : 'no sub/email',
);

/** A client_credentials answer: a JWT access token with the resource's scope, no id_token. */
const clientCredentialsResponse = json((b) =>
  !isJwt(b.access_token)
    ? 'access_token is not a JWT'
    : b.scope !== 'api:read'
      ? `scope is ${String(b.scope)}`
      : String(b.token_type).toLowerCase() !== 'bearer'
        ? 'token_type is not Bearer'
        : null,
);

/** RFC 8693 §2.2.1 (issue 42): a JWT with act for the person, the narrowed scope, issued_token_type. */
const tokenExchangeResponse = json((b) => {
  if (!isJwt(b.access_token)) return 'access_token is not a JWT';
  if (b.issued_token_type !== 'urn:ietf:params:oauth:token-type:access_token') return 'no issued_token_type';
  if (b.scope !== 'api:read') return `scope is ${String(b.scope)}`;
  const payload = JSON.parse(Buffer.from(String(b.access_token).split('.')[1], 'base64url').toString()) as Json;
  return typeof (payload.act as Json | undefined)?.sub === 'string' ? null : 'the token has no act';
});
const tokenExchangeBody = (subjectToken: string) =>
  form({
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: subjectToken,
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    scope: 'api:read',
  });
/**
 * The refresh-token round trip (issue 41): POST /token grant_type=refresh_token with a refresh token an earlier
 * answer gave, rotated on every use (the answer carries the next one, the one sent is used up). autocannon
 * starts every sequence with a fresh connection state, so the live tokens are kept here, in one pool: each
 * request takes one out and its answer puts the next one back; a request still in flight when a run stops
 * takes its token with it. Before each run the pool is topped up (a new family each: a real sign-in's code
 * exchanged with offline_access, `mint`) to one token per connection and a few to spare.
 */
function refreshRotation(a: {
  origin: string;
  auth: string;
  body: (refreshToken: string) => string;
  mint: () => Promise<string>;
}): Workload {
  const pool: string[] = [];
  const spare = 4;
  const check = json((b) =>
    !isJwt(b.access_token)
      ? 'access_token is not a JWT'
      : typeof b.refresh_token !== 'string' || b.refresh_token === ''
        ? 'no refresh_token'
        : b.scope !== 'api:read'
          ? `scope is ${String(b.scope)}`
          : String(b.token_type).toLowerCase() !== 'bearer'
            ? 'token_type is not Bearer'
            : 'id_token' in b
              ? 'an id_token (not asked for)'
              : null,
  );
  return {
    origin: a.origin,
    unit: 'request',
    async beforeRun(connections) {
      while (pool.length < connections + spare) pool.push(await a.mint());
    },
    steps: [
      {
        method: 'POST',
        path: '/token',
        headers: formHeaders(a.auth),
        body: a.body(''),
        // an empty pool (tokens lost to wrong answers) sends an empty refresh_token: an error, counted
        prepare: () => ({ body: a.body(pool.pop() ?? '') }),
        check: (status, body, headers, state) => {
          const problem = check(status, body, headers, state);
          if (!problem) pool.push((JSON.parse(body) as Json).refresh_token as string);
          return problem;
        },
      },
    ],
  };
}

/**
 * The CIBA poll row (issue 42): POST /token grant_type=urn:openid:params:grant-type:ciba for backchannel
 * requests the person has not decided yet, as an agent polls until they act: the answer is 400 with
 * authorization_pending, or slow_down for a poll of the same request sooner than its interval (CIBA Core §11;
 * oidc-provider never answers slow_down). The requests are made through each server's backchannel endpoint
 * (`mint`) and kept for the deployment, renewed before they expire (each waits 30 minutes): ours lets at most
 * five of one app wait for one person, so the same few are polled in turn.
 */
const CIBA_REQUESTS = 2;
const CIBA_RENEW_MS = 20 * 60_000;
const cibaRequests = new WeakMap<() => Promise<string>, { ids: string[]; madeAt: number }>();
const cibaPending = json(
  (b) =>
    b.error === 'authorization_pending' || b.error === 'slow_down'
      ? null
      : `error is ${String(b.error)}, not authorization_pending or slow_down`,
  400,
);
function cibaPolls(a: { origin: string; auth: string; mint: () => Promise<string> }): Workload {
  let next = 0;
  const body = (authReqId: string) => form({ grant_type: 'urn:openid:params:grant-type:ciba', auth_req_id: authReqId });
  const current = () => cibaRequests.get(a.mint)?.ids ?? [];
  return {
    origin: a.origin,
    unit: 'request',
    async beforeRun() {
      const made = cibaRequests.get(a.mint);
      if (made && Date.now() - made.madeAt < CIBA_RENEW_MS) return;
      const ids: string[] = [];
      for (let i = 0; i < CIBA_REQUESTS; i++) ids.push(await a.mint());
      cibaRequests.set(a.mint, { ids, madeAt: Date.now() });
    },
    steps: [
      {
        method: 'POST',
        path: '/token',
        headers: formHeaders(a.auth),
        body: body(''),
        prepare: () => {
          const ids = current();
          return { body: body(ids[next++ % ids.length] ?? '') };
        },
        check: cibaPending,
      },
    ],
  };
}

const get = (path: string, check: Check, headers?: Headers): Step => ({ method: 'GET', path, headers, check });
const formHeaders = (auth: string): Headers => ({
  authorization: auth,
  'content-type': 'application/x-www-form-urlencoded',
});

const transactionPath = (id: string, appId: string) => `/api/v2/client/transaction/${id}?app_id=${appId}&type=pay`;

export const PRICE_TOKENS = ['WLD', 'USDCE'];
/** Fiats: USD and EUR are quoted by the seed feed; JPY comes through its USD→JPY rate (a cross rate). */
export const PRICE_FIATS = ['USD', 'EUR', 'JPY'];
const pricesPath = `/public/v1/prices/latest/wld?cryptoCurrencies=${PRICE_TOKENS.join(',')}&fiatCurrencies=${PRICE_FIATS.join(',')}`;
/** What a price answer lacks (null: every token × fiat has an amount). */
function pricesMissing(b: Json): string | null {
  const prices = (b.result as Json | undefined)?.prices as Record<string, Record<string, Json>> | undefined;
  if (!prices) return 'no result.prices';
  for (const token of PRICE_TOKENS)
    for (const fiat of PRICE_FIATS) if (typeof prices[token]?.[fiat]?.amount !== 'string') return `no ${token}/${fiat}`;
  return null;
}
const pricesCheck = json(pricesMissing);

const changePath = `${pricesPath}&change=true`;
const changeCheck = json((b) => {
  const result = b.result as Json | undefined;
  const change = result?.change as Record<string, Record<string, Json>> | undefined;
  if (!change) return 'no result.change';
  for (const token of PRICE_TOKENS)
    for (const fiat of PRICE_FIATS)
      if (typeof change[token]?.[fiat] !== 'object') return `no change of ${token}/${fiat}`;
  return pricesMissing(b);
});
const historyPath = '/public/v1/prices/history/WLD?fiat=USD&range=24h';
const historyCheck = json((b) => {
  const result = b.result as Json | undefined;
  if (result?.interval_seconds !== 300) return 'no interval_seconds 300';
  const points = result.points as Json[] | undefined;
  if (!Array.isArray(points) || points.length === 0) return 'no points';
  return typeof points[0].amount === 'string' ? null : 'a point without an amount';
});

/** Looks up transaction i of set `tag`, i cycling 1..size across all connections and runs; checks it is that one. */
function rotatingLookup(t: AttestTarget, tag: number, size: number): Workload {
  let next = 0;
  const expected = (i: unknown) => `bench-${tag.toString(16)}-${i}`;
  return {
    origin: t.origins.transactions,
    unit: 'request',
    steps: [
      {
        method: 'GET',
        path: transactionPath(bulkTransactionId(tag, 1), t.seed.appId),
        headers: { authorization: `Bearer ${t.seed.apiKey}` },
        prepare(state) {
          next = (next % size) + 1;
          state.i = next;
          return { path: transactionPath(bulkTransactionId(tag, next), t.seed.appId) };
        },
        check: (status, body, headers, state) =>
          json((b) =>
            b.reference !== expected(state.i) ? 'wrong transaction' : b.app_id !== t.seed.appId ? 'wrong app_id' : null,
          )(status, body, headers, state),
      },
    ],
  };
}

/**
 * The seeded request's page: 200 HTML with its amount (1.5 USDCE), the QR code (an SVG) of its EIP-681 URI
 * (USDCE on World Chain, 480, to the shop's address, 1.5 USDCE in the token's 6 decimals) and the wallet link.
 */
const PAY_URI = `/transfer?address=0x${'2'.repeat(40)}&amp;uint256=1500000`;
const payPageCheck: Check = (status, body, headers) =>
  status !== 200
    ? `status ${status}`
    : !headers['content-type']?.startsWith('text/html')
      ? 'not HTML'
      : !body.includes('>1.5 USDCE</h2>')
        ? 'no amount'
        : !/data-uri="ethereum:0x[0-9a-fA-F]{40}@480\/transfer\?address=0x2{40}&amp;uint256=1500000"><svg/.test(body)
          ? 'no QR code of the EIP-681 URI'
          : !body.includes(`class="wallet" href="ethereum:`) || !body.includes(PAY_URI)
            ? 'no wallet link'
            : null;

export const SCENARIOS: Scenario[] = [
  {
    key: 'discovery',
    name: 'discovery (GET /.well-known/openid-configuration)',
    unit: 'request',
    attest: (t) => ({
      origin: t.origins.identity,
      unit: 'request',
      steps: [get('/.well-known/openid-configuration', discoveryCheck(t.issuer))],
    }),
    oidc: (p) => ({
      origin: p.origin,
      unit: 'request',
      steps: [get('/.well-known/openid-configuration', discoveryCheck(p.origin))],
    }),
    embedded: { reference: 'floor', minRatio: 0.8, maxP99Ms: 15, minHttpRatio: 0.5 },
    real: { reference: 'none' },
  },
  {
    key: 'jwks',
    name: 'JWKS (GET /jwks)',
    unit: 'request',
    attest: (t) => ({ origin: t.origins.identity, unit: 'request', steps: [get('/jwks', jwksCheck)] }),
    oidc: (p) => ({ origin: p.origin, unit: 'request', steps: [get('/jwks', jwksCheck)] }),
    embedded: { reference: 'floor', minRatio: 0.8, maxP99Ms: 15, minHttpRatio: 0.5 },
    real: { reference: 'none' },
  },
  {
    key: 'signin',
    name: 'sign-in round trip (authorize with session + token), trips/s',
    unit: 'trip',
    attest: (t) => ({
      origin: t.origins.identity,
      unit: 'trip',
      steps: [
        get(authorizePath(t.seed.appId, t.seed.pkce.challenge), redirectWithCode(REDIRECT_URI), {
          cookie: t.seed.sessionCookie,
        }),
        {
          method: 'POST',
          path: '/token',
          headers: formHeaders(basicAuth(t.seed.appId, t.seed.clientSecret)),
          prepare: (state) =>
            state.code
              ? {
                  body: form({
                    grant_type: 'authorization_code',
                    code: String(state.code),
                    redirect_uri: REDIRECT_URI,
                    code_verifier: t.seed.pkce.verifier,
                  }),
                }
              : null,
          check: tokenResponse,
        },
      ],
    }),
    oidc: (p) => ({
      origin: p.origin,
      unit: 'trip',
      steps: [
        // its round-trip resource: a JWT access token, RS256 as ours without a resource
        get(peerAuthorizePath(p, PEER_ROUND_TRIP_RESOURCE), redirectWithCode(PEER_REDIRECT_URI), {
          cookie: p.sessionCookie,
        }),
        {
          method: 'POST',
          path: '/token',
          headers: formHeaders(basicAuth(p.clientId, p.clientSecret)),
          prepare: (state) =>
            state.code ? { body: peerTokenBody(p, String(state.code), PEER_ROUND_TRIP_RESOURCE) } : null,
          check: tokenResponse,
        },
      ],
    }),
    embedded: { reference: 'oidc-provider', minRatio: 1.5 },
    real: { reference: 'oidc-provider', minRatio: 1.5 },
  },
  {
    key: 'par',
    name: 'PAR round trip (PAR + authorize with session + token), trips/s',
    unit: 'trip',
    attest: (t) =>
      parTrip({
        origin: t.origins.identity,
        parPath: '/par',
        authorizePath: '/authorize',
        clientId: t.seed.appId,
        auth: basicAuth(t.seed.appId, t.seed.clientSecret),
        parBody: parBody(t.seed.appId, t.seed.pkce.challenge),
        sessionCookie: t.seed.sessionCookie,
        redirectUri: REDIRECT_URI,
        tokenBody: (code) =>
          form({
            grant_type: 'authorization_code',
            code,
            redirect_uri: REDIRECT_URI,
            code_verifier: t.seed.pkce.verifier,
          }),
      }),
    oidc: (p) =>
      parTrip({
        origin: p.origin,
        parPath: '/request',
        authorizePath: '/auth',
        clientId: p.clientId,
        auth: basicAuth(p.clientId, p.clientSecret),
        parBody: peerParBody(p),
        sessionCookie: p.sessionCookie,
        redirectUri: PEER_REDIRECT_URI,
        tokenBody: (code) => peerTokenBody(p, code, PEER_ROUND_TRIP_RESOURCE),
      }),
    embedded: { reference: 'oidc-provider', minRatio: 1.3 },
    real: { reference: 'none' },
  },
  {
    key: 'client-credentials',
    name: 'client_credentials (POST /token: a JWT for a resource)',
    unit: 'request',
    attest: (t) => ({
      origin: t.origins.identity,
      unit: 'request',
      steps: [
        {
          method: 'POST',
          path: '/token',
          headers: formHeaders(basicAuth(t.seed.appId, t.seed.clientSecret)),
          body: form({ grant_type: 'client_credentials', resource: t.seed.resourceUri, scope: 'api:read' }),
          check: clientCredentialsResponse,
        },
      ],
    }),
    oidc: (p) => ({
      origin: p.origin,
      unit: 'request',
      steps: [
        {
          method: 'POST',
          path: '/token',
          headers: formHeaders(basicAuth(p.clientId, p.clientSecret)),
          body: form({ grant_type: 'client_credentials', resource: PEER_RESOURCE, scope: 'api:read' }),
          check: clientCredentialsResponse,
        },
      ],
    }),
    embedded: { reference: 'oidc-provider', minRatio: 1.5 },
    real: { reference: 'oidc-provider', minRatio: 1.5 },
  },
  {
    // issue 42: oidc-provider has no RFC 8693; its registerGrantType configures the same grant
    // (peers/oidc-provider-server.ts: the subject JWT verified, its grant still held, narrowed, act)
    key: 'token-exchange',
    name: 'token exchange (POST /token: a person’s token for a JWT with act)',
    unit: 'request',
    attest: (t) => ({
      origin: t.origins.identity,
      unit: 'request',
      steps: [
        {
          method: 'POST',
          path: '/token',
          headers: formHeaders(basicAuth(t.seed.appId, t.seed.clientSecret)),
          body: tokenExchangeBody(t.seed.resourceAccessToken),
          check: tokenExchangeResponse,
        },
      ],
    }),
    oidc: (p) => ({
      origin: p.origin,
      unit: 'request',
      steps: [
        {
          method: 'POST',
          path: '/token',
          headers: formHeaders(basicAuth(p.clientId, p.clientSecret)),
          body: tokenExchangeBody(p.resourceAccessToken),
          check: tokenExchangeResponse,
        },
      ],
    }),
    embedded: { reference: 'oidc-provider', minRatio: 1.5 },
    real: { reference: 'oidc-provider', minRatio: 1.5 },
  },
  {
    // issue 42: a pending request polled (what an agent sends until the person acts); bench/README.md
    key: 'ciba-poll',
    name: 'CIBA poll answered (POST /token grant_type ciba: a pending request, authorization_pending / slow_down)',
    unit: 'request',
    attest: (t) =>
      cibaPolls({
        origin: t.origins.identity,
        auth: basicAuth(t.seed.appId, t.seed.clientSecret),
        mint: t.seed.newCibaRequest,
      }),
    oidc: (p) =>
      cibaPolls({ origin: p.origin, auth: basicAuth(p.cibaClientId, p.clientSecret), mint: p.newCibaRequest }),
    embedded: { reference: 'oidc-provider', minRatio: 1.5 },
    real: { reference: 'oidc-provider', minRatio: 1.5 },
  },
  {
    key: 'refresh',
    name: 'refresh-token round trip (POST /token refresh_token, rotated: a JWT and the next refresh token)',
    unit: 'request',
    attest: (t) =>
      refreshRotation({
        origin: t.origins.identity,
        auth: basicAuth(t.seed.appId, t.seed.clientSecret),
        body: (token) =>
          form({ grant_type: 'refresh_token', refresh_token: token, resource: t.seed.resourceUri, scope: 'api:read' }),
        mint: t.seed.newRefreshToken,
      }),
    oidc: (p) =>
      refreshRotation({
        origin: p.origin,
        auth: basicAuth(p.clientId, p.clientSecret),
        body: (token) =>
          form({ grant_type: 'refresh_token', refresh_token: token, resource: PEER_RESOURCE, scope: 'api:read' }),
        mint: p.newRefreshToken,
      }),
    embedded: { reference: 'oidc-provider', minRatio: 1.5 },
    real: { reference: 'oidc-provider', minRatio: 1.5 },
  },
  {
    key: 'introspect',
    name: 'POST /introspect (Basic)',
    unit: 'request',
    attest: (t) => ({
      origin: t.origins.identity,
      unit: 'request',
      steps: [
        {
          method: 'POST',
          path: '/introspect',
          headers: formHeaders(basicAuth(t.seed.appId, t.seed.clientSecret)),
          body: form({ token: t.seed.accessToken }),
          check: activeCheck(t.seed.appId),
        },
      ],
    }),
    oidc: (p) => ({
      origin: p.origin,
      unit: 'request',
      steps: [
        {
          method: 'POST',
          path: '/token/introspection',
          headers: formHeaders(basicAuth(p.clientId, p.clientSecret)),
          body: form({ token: p.opaqueAccessToken }),
          check: activeCheck(p.clientId),
        },
      ],
    }),
    embedded: { reference: 'oidc-provider', minRatio: 1.5 },
    real: { reference: 'oidc-provider', minRatio: 1.5 },
  },
  {
    key: 'userinfo',
    name: 'GET /userinfo (Bearer)',
    unit: 'request',
    attest: (t) => ({
      origin: t.origins.identity,
      unit: 'request',
      steps: [get('/userinfo', userinfoCheck, { authorization: `Bearer ${t.seed.accessToken}` })],
    }),
    oidc: (p) => ({
      origin: p.origin,
      unit: 'request',
      steps: [get('/me', userinfoCheck, { authorization: `Bearer ${p.opaqueAccessToken}` })],
    }),
    embedded: { reference: 'oidc-provider', minRatio: 1.5 },
    real: { reference: 'oidc-provider', minRatio: 1.5 },
  },
  {
    key: 'userinfo-dpop',
    name: 'GET /userinfo (DPoP: a proof verified per request)',
    unit: 'request',
    attest: (t) => ({
      origin: t.origins.identity,
      unit: 'request',
      steps: [
        {
          ...get('/userinfo', userinfoCheck, { authorization: `DPoP ${t.seed.dpop.accessToken}` }),
          prepare: () => ({
            headers: { dpop: dpopProof(t.seed.dpop.key, 'GET', `${t.issuer}/userinfo`, t.seed.dpop.accessToken) },
          }),
        },
      ],
    }),
    oidc: (p) => ({
      origin: p.origin,
      unit: 'request',
      steps: [
        {
          ...get('/me', userinfoCheck, { authorization: `DPoP ${p.dpop.accessToken}` }),
          prepare: () => ({ headers: { dpop: dpopProof(p.dpop.key, 'GET', `${p.origin}/me`, p.dpop.accessToken) } }),
        },
      ],
    }),
    embedded: { reference: 'oidc-provider', minRatio: 1.3 },
    real: { reference: 'oidc-provider', minRatio: 1.0 },
  },
  {
    key: 'tx-hit',
    name: 'transaction lookup (cache hit)',
    unit: 'request',
    attest: (t) => ({
      origin: t.origins.transactions,
      unit: 'request',
      steps: [
        get(
          transactionPath(t.seed.transactionId, t.seed.appId),
          json((b) => (b.reference !== 'bench-hit' || b.transaction_status !== 'mined' ? 'wrong transaction' : null)),
          { authorization: `Bearer ${t.seed.apiKey}` },
        ),
      ],
    }),
    embedded: { reference: 'floor', minRatio: 0.8, maxP99Ms: 15, minHttpRatio: 0.3 },
    real: { reference: 'floor', minRatio: 0.6, minHttpRatio: 0.3 },
  },
  {
    key: 'payreq-read',
    name: 'payment request read (GET /api/v2/client/payment-requests/{id})',
    unit: 'request',
    attest: (t) => ({
      origin: t.origins.transactions,
      unit: 'request',
      steps: [
        get(
          `/api/v2/client/payment-requests/${t.seed.paymentRequestId}`,
          json((b) =>
            b.id !== t.seed.paymentRequestId || b.reference !== 'bench-request' || b.amount_due !== '1500000'
              ? 'wrong payment request'
              : null,
          ),
          { authorization: `Bearer ${t.seed.apiKey}` },
        ),
      ],
    }),
    embedded: { reference: 'floor', minRatio: 0.8, maxP99Ms: 15 },
    real: { reference: 'floor', minRatio: 0.6 },
  },
  {
    key: 'pay-page',
    name: "customer's payment page (GET /pay/{id}: HTML, QR code of the EIP-681 URI)",
    unit: 'request',
    attest: (t) => ({
      origin: t.origins.transactions,
      unit: 'request',
      steps: [get(`/pay/${t.seed.paymentRequestId}`, payPageCheck)],
    }),
    embedded: { reference: 'floor', minRatio: 0.8, maxP99Ms: 15 },
    real: { reference: 'floor', minRatio: 0.6 },
  },
  {
    key: 'payreq-create',
    name: 'payment request create (POST /api/v2/client/payment-requests, token-priced)',
    unit: 'request',
    attest: (t) => {
      let next = 0;
      const run = Date.now().toString(36);
      const body = (i: number) =>
        JSON.stringify({
          reference: `bench-create-${run}-${i}`,
          chain: 'worldchain',
          token: 'USDCE',
          to: `0x${'2'.repeat(40)}`,
          token_amount: '1500000',
        });
      return {
        origin: t.origins.transactions,
        unit: 'request',
        steps: [
          {
            method: 'POST',
            path: '/api/v2/client/payment-requests',
            headers: { authorization: `Bearer ${t.seed.apiKey}`, 'content-type': 'application/json' },
            body: body(0),
            prepare: () => ({ body: body(++next) }),
            check: json((b) => (b.status !== 'pending' || b.amount_due !== '1500000' ? 'not created' : null), 201),
          },
        ],
      };
    },
    // issue 44: what one create costs is in bench/README.md
    embedded: { reference: 'none', minRate: 1000 },
    real: { reference: 'none' },
  },
  {
    key: 'x402-verify',
    name: 'x402 verify (POST /x402/verify: an EIP-3009 authorization, checked against the chain)',
    unit: 'request',
    attest: (t) => {
      let next = 0;
      const { bodies, payer } = t.seed.x402;
      return {
        origin: t.origins.transactions,
        unit: 'request',
        steps: [
          {
            method: 'POST',
            path: '/x402/verify',
            headers: { authorization: `Bearer ${t.seed.apiKey}`, 'content-type': 'application/json' },
            body: bodies[0],
            prepare: () => ({ body: bodies[next++ % bodies.length] }),
            check: json((b) =>
              b.isValid !== true ? `not valid: ${String(b.invalidReason)}` : b.payer !== payer ? 'wrong payer' : null,
            ),
          },
        ],
      };
    },
    embedded: { reference: 'none', minRate: 2000 },
    real: { reference: 'none' },
  },
  {
    key: 'tx-miss',
    name: 'transaction lookup (cache miss: rotating set)',
    unit: 'request',
    attest: (t) => rotatingLookup(t, 1, t.missSet),
    embedded: { reference: 'floor' },
    real: { reference: 'floor', minRatio: 0.6 },
  },
  {
    key: 'prices',
    name: `price lookup (${PRICE_TOKENS.length} tokens × ${PRICE_FIATS.length} fiats)`,
    unit: 'request',
    attest: (t) => ({ origin: t.origins.prices, unit: 'request', steps: [get(pricesPath, pricesCheck)] }),
    embedded: { reference: 'floor', minRatio: 0.8, maxP99Ms: 15, minHttpRatio: 0.3 },
    real: { reference: 'floor', minRatio: 0.6, minHttpRatio: 0.3 },
  },
  {
    key: 'prices-change',
    name: `price lookup with the opt-in change (${PRICE_TOKENS.length} tokens × ${PRICE_FIATS.length} fiats)`,
    unit: 'request',
    attest: (t) => ({ origin: t.origins.prices, unit: 'request', steps: [get(changePath, changeCheck)] }),
    embedded: { reference: 'floor', minRatio: 0.8, maxP99Ms: 15 },
    real: { reference: 'floor', minRatio: 0.6 },
  },
  {
    key: 'prices-history',
    name: 'price history (WLD/USD, 24 h at 5 min)',
    unit: 'request',
    attest: (t) => ({ origin: t.origins.prices, unit: 'request', steps: [get(historyPath, historyCheck)] }),
    embedded: { reference: 'floor', minRatio: 0.8, maxP99Ms: 15 },
    real: { reference: 'floor', minRatio: 0.6 },
  },
  {
    key: 'tx-growth',
    name: 'transaction lookup (rotating over 1,000 stored ids)',
    unit: 'request',
    attest: (t) => rotatingLookup(t, 2, t.growthSet),
    embedded: { reference: 'none' },
    real: { reference: 'none' },
    growthOnly: true,
  },
];

/** GET / → hello: the Express floor and Node's `http` floor alike. */
export const floorWorkload = (origin: string): Workload => ({
  origin,
  unit: 'request',
  steps: [
    get('/', (status, body) => (status !== 200 ? `status ${status}` : body !== 'hello' ? 'body is not hello' : null)),
  ],
});

export function selectScenarios(filters: string[]): Scenario[] {
  const chosen = SCENARIOS.filter(
    (s) =>
      !s.growthOnly && (!filters.length || filters.some((f) => s.key.includes(f) || s.name.toLowerCase().includes(f))),
  );
  if (!chosen.length && filters.length)
    throw new Error(
      `no scenario matches ${filters.join(', ')}; keys: ${SCENARIOS.filter((s) => !s.growthOnly)
        .map((s) => s.key)
        .join(', ')}`,
    );
  return chosen;
}

export const scenario = (key: string): Scenario => SCENARIOS.find((s) => s.key === key)!;
