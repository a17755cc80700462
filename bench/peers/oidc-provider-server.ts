/**
 * The reference identity provider: oidc-provider configured like ours — in-memory adapter, one RS256
 * key (and an ES256 key: the resource's access tokens are ES256, as the bench resource's in ours, RFC 9068 §2.1),
 * pairwise subjects, JWT access tokens for a resource indicator, introspection, DPoP, PAR, a confidential
 * client (client_secret_basic), client_credentials, refresh tokens rotated on every use. Run in its own process (pinned like ours) by bench/peers/oidc-provider.ts.
 * The interaction (sign-in + consent) finishes programmatically for the one bench account: the bench
 * goes through it once and then replays the session cookie, as a signed-in browser does.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import { createPublicKey } from 'node:crypto';
import { jwtVerify } from 'jose';
import Provider, { errors, type Configuration, type JWK, type KoaContextWithOIDC } from 'oidc-provider';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const PORT = Number(env('PEER_PORT'));
const ISSUER = env('PEER_ISSUER');
const CLIENT_ID = env('PEER_CLIENT_ID');
const CLIENT_SECRET = env('PEER_CLIENT_SECRET');
const REDIRECT_URI = env('PEER_REDIRECT_URI');
const RESOURCE = env('PEER_RESOURCE');
/** The round trips' resource (signin, par): its JWT access tokens RS256, as ours without a resource. */
const ROUND_TRIP_RESOURCE = env('PEER_ROUND_TRIP_RESOURCE');
const ACCOUNT = 'bench';
const RESOURCE_SCOPE = 'api:read';
/** RFC 8693 (issue 42): oidc-provider has no token exchange; registerGrantType configures it as ours works. */
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const EXCHANGE_TTL = 900;
/** CIBA (issue 42): the grant type of the ciba-poll row's polls. */
const CIBA = 'urn:openid:params:grant-type:ciba';
/** CIBA requests wait as ours may: requested_expiry up to 30 minutes (ours: 30 to 1800 s, 300 by default). */
const CIBA_MAX_EXPIRY = 1800;
const CIBA_DEFAULT_EXPIRY = 300;

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'bench-rs256', alg: 'RS256', use: 'sig' } as JWK;
// RFC 9068 §2.1: the resource's access tokens are ES256, as the bench's resource in ours (access_token_alg ES256)
const { privateKey: ecKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const resourceKey = { ...ecKey.export({ format: 'jwk' }), kid: 'bench-es256', alg: 'ES256', use: 'sig' } as JWK;
/** The resource's tokens' algorithm (bench/README.md: the same in ours). */
const RESOURCE_ALG = 'ES256';
const pairwiseSalt = randomBytes(32).toString('hex');

const configuration: Configuration = {
  // no adapter: oidc-provider's in-memory adapter
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'client_credentials', TOKEN_EXCHANGE, 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      subject_type: 'pairwise',
      id_token_signed_response_alg: 'RS256',
    },
    // CIBA in poll mode (issue 42), a client of its own: oidc-provider wants a pairwise CIBA client to have a
    // jwks_uri, and a sector_identifier_uri it fetches when it has redirect URIs too; a poll of a pending request
    // issues nothing, so the subject type plays no part in the ciba-poll row
    {
      client_id: `${CLIENT_ID}-ciba`,
      client_secret: CLIENT_SECRET,
      grant_types: [CIBA],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      backchannel_token_delivery_mode: 'poll',
      subject_type: 'public',
      id_token_signed_response_alg: 'RS256',
    },
  ],
  jwks: { keys: [signingKey, resourceKey] },
  // public only for the CIBA client (below)
  subjectTypes: ['pairwise', 'public'],
  pairwiseIdentifier: async (_ctx, accountId, client) =>
    createHash('sha256').update(`${client.sectorIdentifier}|${accountId}|${pairwiseSalt}`).digest('hex'),
  cookies: { keys: [randomBytes(32).toString('hex')] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'] },
  // offline_access as ours (issue 41): a refresh token, rotated on every use (rotateRefreshToken below)
  scopes: ['openid', 'email', 'offline_access'],
  rotateRefreshToken: true,
  findAccount: async (_ctx, id) =>
    id === ACCOUNT
      ? { accountId: id, claims: async () => ({ sub: id, email: `${id}@bench.invalid`, email_verified: true }) }
      : undefined,
  features: {
    devInteractions: { enabled: false },
    introspection: { enabled: true },
    // client_credentials as ours (issue 41): a token for the resource, the client acting as itself
    clientCredentials: { enabled: true },
    // DPoP as ours: proofs verified per request, jti replay refused, nonces not required
    dPoP: { enabled: true },
    // CIBA as ours (issue 42), poll mode: login_hint names the person (ours: their pairwise sub for the app);
    // the approval stub is the person who has not decided yet: nothing approves or denies during the bench, so
    // every request stays pending (the ciba-poll row polls pending requests, as agents do until the person acts)
    ciba: {
      enabled: true,
      deliveryModes: ['poll'],
      processLoginHint: async (_ctx, loginHint) => (loginHint === ACCOUNT ? ACCOUNT : undefined),
      processLoginHintToken: async () => {
        throw new errors.InvalidRequest('login_hint_token is not supported');
      },
      validateBindingMessage: async () => undefined,
      validateRequestContext: async () => undefined,
      verifyUserCode: async () => undefined,
      triggerAuthenticationDevice: async () => undefined,
    },
    // PAR as ours (RFC 9126): client-authenticated at /request, request_uri single use, not required
    pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => false,
      getResourceServerInfo: (_ctx, resource) => {
        if (resource !== RESOURCE && resource !== ROUND_TRIP_RESOURCE) throw new Error(`unknown resource ${resource}`);
        return {
          scope: RESOURCE_SCOPE,
          audience: resource,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 3600,
          jwt: { sign: { alg: resource === RESOURCE ? RESOURCE_ALG : 'RS256' } },
        };
      },
    },
  },
  // a token exchange's token names the client acting for the person (RFC 8693 act), as ours
  extraTokenClaims: async (_ctx, token) =>
    (token as { gty?: string }).gty === 'token_exchange' ? { act: { sub: token.clientId } } : undefined,
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  ttl: {
    AccessToken: 3600,
    AuthorizationCode: 60,
    IdToken: 3600,
    Session: 86400,
    Grant: 86400,
    Interaction: 600,
    RefreshToken: 30 * 86400, // ours: REFRESH_TOKEN_TTL_SECONDS' default
    BackchannelAuthenticationRequest: (ctx) => {
      const asked = Number(ctx?.oidc?.params?.requested_expiry);
      return Number.isFinite(asked) && asked > 0 ? Math.min(CIBA_MAX_EXPIRY, asked) : CIBA_DEFAULT_EXPIRY;
    },
  },
};

const provider = new Provider(ISSUER, configuration);
provider.on('server_error', (_ctx, err) => process.stderr.write(`server_error: ${err.stack ?? err.message}\n`));

// JWT access tokens are not stored by oidc-provider: the grant of each is remembered as it is issued, so an
// exchange finds whether the person's grant still holds (ours checks the person's consent and session)
const grantOfToken = new Map<string, { grantId: string; accountId: string }>();
provider.on('access_token.issued', (token: { jti: string; grantId?: string; accountId?: string }) => {
  if (token.grantId && token.accountId)
    grantOfToken.set(token.jti, { grantId: token.grantId, accountId: token.accountId });
});
const verificationKey = createPublicKey({ key: resourceKey as import('node:crypto').JsonWebKey, format: 'jwk' });
/**
 * A subject token verified once is remembered until it expires, as ours does (kernel/verified-tokens.ts): the
 * reference pays the signature check once per token, not per exchange, as ours. Bounded as ours.
 */
const verifiedSubjects = new Map<string, Record<string, unknown>>();
const VERIFIED_MAX = 10000;
async function verifiedSubject(token: string): Promise<Record<string, unknown>> {
  const key = createHash('sha256').update(token).digest('base64');
  const known = verifiedSubjects.get(key);
  if (known && Number(known.exp) > Date.now() / 1000) return known;
  const { payload } = await jwtVerify(token, verificationKey, {
    issuer: ISSUER,
    audience: RESOURCE,
    typ: 'at+jwt',
    algorithms: [RESOURCE_ALG],
  });
  if (verifiedSubjects.size >= VERIFIED_MAX) verifiedSubjects.delete(verifiedSubjects.keys().next().value as string);
  verifiedSubjects.set(key, payload);
  return payload;
}

/** grant_type token-exchange: the subject token verified and still granted, narrowed, a JWT with act. */
async function tokenExchange(ctx: KoaContextWithOIDC): Promise<void> {
  const params = ctx.oidc.params as Record<string, string | undefined>;
  if (!params.subject_token || params.subject_token_type !== ACCESS_TOKEN_TYPE)
    throw new errors.InvalidRequest('subject_token and subject_token_type (an access token) are required');
  let claims: Record<string, unknown>;
  try {
    claims = await verifiedSubject(params.subject_token);
  } catch {
    throw new errors.InvalidGrant('subject_token is invalid or expired');
  }
  const issued = grantOfToken.get(String(claims.jti));
  const grant = issued ? await provider.Grant.find(issued.grantId) : undefined;
  if (!issued || !grant || grant.accountId !== issued.accountId)
    throw new errors.InvalidGrant('subject_token is no longer granted');
  if (params.resource !== undefined && params.resource !== RESOURCE) throw new errors.InvalidTarget();
  const held = String(claims.scope ?? '').split(' ');
  const asked = params.scope === undefined ? held : params.scope.split(' ');
  if (asked.some((s) => !held.includes(s))) throw new errors.InvalidScope('a wider scope than subject_token', 'scope');
  const token = new provider.AccessToken({
    accountId: issued.accountId,
    client: ctx.oidc.client!,
    grantId: issued.grantId,
    gty: 'token_exchange',
    scope: asked.join(' '),
  });
  token.resourceServer = new provider.ResourceServer(RESOURCE, {
    scope: RESOURCE_SCOPE,
    audience: RESOURCE,
    accessTokenFormat: 'jwt',
    accessTokenTTL: EXCHANGE_TTL,
    jwt: { sign: { alg: RESOURCE_ALG } },
  });
  ctx.oidc.entity('AccessToken', token);
  const value = await token.save();
  ctx.body = {
    access_token: value,
    issued_token_type: ACCESS_TOKEN_TYPE,
    token_type: token.tokenType,
    expires_in: token.expiration,
    scope: token.scope,
  };
}
provider.registerGrantType(TOKEN_EXCHANGE, tokenExchange, [
  'subject_token',
  'subject_token_type',
  'actor_token',
  'actor_token_type',
  'requested_token_type',
  'audience',
  'resource',
  'scope',
]);
const callback = provider.callback();

/** Sign-in and consent for the bench account, granted at once (openid email, and the resource's scope). */
async function finishInteraction(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (process.env.BENCH_DEBUG) process.stderr.write(`interaction ${JSON.stringify(details.prompt)}\n`);
  const grant = new provider.Grant({ accountId: ACCOUNT, clientId: String(details.params.client_id) });
  grant.addOIDCScope('openid email offline_access');
  grant.addResourceScope(RESOURCE, RESOURCE_SCOPE);
  grant.addResourceScope(ROUND_TRIP_RESOURCE, RESOURCE_SCOPE);
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: ACCOUNT }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

const server = http.createServer((req, res) => {
  if (req.url?.startsWith('/interaction/')) {
    finishInteraction(req, res).catch((err: Error) => {
      res.statusCode = 500;
      res.end(err.message);
    });
    return;
  }
  // Koa's request handler catches its own errors (it answers 500); nothing is left to handle here
  void callback(req, res);
});
server.listen(PORT, '127.0.0.1', () => process.stdout.write(`oidc-provider listening on ${PORT}\n`));
const stop = () => process.exit(0);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
