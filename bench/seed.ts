/**
 * Data for the scenarios: an app, a user, a transaction and a signed-in session through the admin
 * CLI and the sign-in pages (`pnpm manage`, as the README shows), and bulk rows (many transactions,
 * many price quotes) with SQL generate_series straight into the service's schema.
 */
import { randomBytes } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Queryable } from '@attest/common';
import { STUB_CHAIN_ID, STUB_TOKEN_NAME, STUB_TOKEN_VERSION } from './chain-stub';
import { Browser } from '../services/identity/test/browser';
import { manage } from '../test/support';
import { dpopKey, dpopProof, type DpopKey } from './dpop';
import { basicAuth, CookieJar, codeFrom, expectJson, form, pkce } from './http';
import type { Deployment } from './stack';

export const REDIRECT_URI = 'http://localhost:3000/callback';
export const SCOPE = 'openid email';
const USER = { username: 'bench', password: 'correct horse battery staple' };

export interface AttestSeed {
  appId: string;
  clientSecret: string;
  apiKey: string;
  /** A mined transaction (cached for long once looked up). */
  transactionId: string;
  /** A pending payment request (token-priced) of the app. */
  paymentRequestId: string;
  /** Cookie header of a signed-in session with consent given. */
  sessionCookie: string;
  accessToken: string;
  pkce: { verifier: string; challenge: string };
  /** A DPoP-bound access token (cnf.jkt) and its key, for the userinfo-dpop row. */
  dpop: { key: DpopKey; accessToken: string };
  /** A registered resource (issue 41), for the client_credentials and refresh-token rows. */
  resourceUri: string;
  /** The person's access token for that resource (its app's): the token-exchange row's subject token (issue 42). */
  resourceAccessToken: string;
  /** A refresh token of a new family (offline_access, for the resource): /authorize with the session + /token. */
  newRefreshToken: () => Promise<string>;
  /**
   * A new backchannel authentication request (CIBA, issue 42: POST /bc-authorize, poll mode) for the signed-in
   * person, waiting for them for 30 minutes: its auth_req_id. At most five wait at once (MAX_PENDING_PER_APP).
   */
  newCibaRequest: () => Promise<string>;
  /** Bodies of POST /x402/verify (issue 43): valid EIP-3009 authorizations, each with its own nonce, and their payer. */
  x402: { bodies: string[]; payer: string };
}

/** World Chain's bridged USDC (USDCE), as CHAIN_TOKENS configures it by default: the x402 row's asset. */
export const X402_ASSET = '0x79A02482A880bCE3F13e09Da970dC34db4CD24d1';
/** The shop's receiving address (registered by the seed): the x402 row's payTo. */
export const SHOP_ADDRESS = `0x${'2'.repeat(40)}` as const;

/**
 * `count` bodies of POST /x402/verify as @x402/core's facilitator client sends them: what the seller asks
 * (1 USDCE to the shop's address) and a buyer's EIP-3009 authorization of it, signed for the token's
 * EIP-712 domain on the bench's chain (bench/chain-stub.ts), valid for a day, each with a new nonce.
 */
export async function x402Bodies(count: number): Promise<{ bodies: string[]; payer: string }> {
  const payer = privateKeyToAccount(generatePrivateKey());
  const now = BigInt(Math.floor(Date.now() / 1000));
  const requirements = {
    scheme: 'exact',
    network: `eip155:${STUB_CHAIN_ID}`,
    asset: X402_ASSET,
    amount: '1000000',
    payTo: SHOP_ADDRESS,
    maxTimeoutSeconds: 300,
    extra: { name: STUB_TOKEN_NAME, version: STUB_TOKEN_VERSION },
  };
  const bodies: string[] = [];
  for (let i = 0; i < count; i++) {
    const message = {
      from: payer.address,
      to: SHOP_ADDRESS,
      value: 1_000_000n,
      validAfter: now - 600n,
      validBefore: now + 86_400n,
      nonce: `0x${randomBytes(32).toString('hex')}` as const,
    };
    const signature = await payer.signTypedData({
      types: {
        TransferWithAuthorization: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'validAfter', type: 'uint256' },
          { name: 'validBefore', type: 'uint256' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'TransferWithAuthorization',
      domain: {
        name: STUB_TOKEN_NAME,
        version: STUB_TOKEN_VERSION,
        chainId: STUB_CHAIN_ID,
        verifyingContract: X402_ASSET,
      },
      message,
    });
    const authorization = {
      from: message.from,
      to: message.to,
      value: message.value.toString(),
      validAfter: message.validAfter.toString(),
      validBefore: message.validBefore.toString(),
      nonce: message.nonce,
    };
    bodies.push(
      JSON.stringify({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          resource: { url: 'https://shop.bench.invalid/paid' },
          accepted: requirements,
          payload: { authorization, signature },
        },
        paymentRequirements: requirements,
      }),
    );
  }
  return { bodies, payer: payer.address };
}

async function run(deploy: Deployment, ...args: string[]): Promise<Record<string, string>> {
  const result = await manage(args, deploy.env);
  if (result.code !== 0) throw new Error(`pnpm manage ${args.slice(0, 2).join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, string>;
}

/** The resource of the client_credentials row, as oidc-provider's is configured (one scope, api:read). */
export const RESOURCE_URI = 'https://api.bench.invalid/';

export function authorizePath(appId: string, challenge: string, extra: Record<string, string> = {}): string {
  return `/authorize?${form({ response_type: 'code', scope: SCOPE, client_id: appId, redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: 'S256', ...extra })}`;
}

/** /authorize for a refresh token (issue 41): offline_access and the resource's scope, for the resource. */
export function refreshAuthorizePath(appId: string, challenge: string): string {
  return `/authorize?${form({ response_type: 'code', scope: `${SCOPE} offline_access api:read`, resource: RESOURCE_URI, client_id: appId, redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: 'S256' })}`;
}

/** The same request pushed to /par (RFC 9126) by the bench app, authenticated apart (Basic). */
export function parBody(appId: string, challenge: string): string {
  return form({
    response_type: 'code',
    scope: SCOPE,
    client_id: appId,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
}

/** The app, user and a mined transaction, through `pnpm manage`. Sign in after any restart (embedded sessions live in memory). */
export async function seedAttest(deploy: Deployment): Promise<Omit<AttestSeed, SignedIn>> {
  // CIBA in poll mode (issue 42): the ciba-poll row's requests
  const app = await run(
    deploy,
    'app',
    'create',
    '--name',
    'Bench',
    '--redirect-uri',
    REDIRECT_URI,
    '--ciba-mode',
    'poll',
  );
  await run(
    deploy,
    'resource',
    'create',
    '--uri',
    RESOURCE_URI,
    '--name',
    'Bench API',
    '--scope',
    'api:read',
    '--machine-client',
    app.app_id,
    // RFC 9068 §2.1: the resource's tokens ES256, as the oidc-provider reference's resource (bench/README.md)
    '--access-token-alg',
    'ES256',
  );
  await run(
    deploy,
    'user',
    'create',
    '--username',
    USER.username,
    '--password',
    USER.password,
    '--verification-level',
    'orb',
  );
  const tx = await run(
    deploy,
    'transaction',
    'record',
    '--app-id',
    app.app_id,
    '--type',
    'pay',
    '--reference',
    'bench-hit',
    '--from',
    `0x${'1'.repeat(40)}`,
    '--to',
    `0x${'2'.repeat(40)}`,
    '--chain',
    'worldchain',
    '--token',
    'USDCE',
    '--token-amount',
    '1500000',
  );
  await run(deploy, 'transaction', 'set-status', tx.transaction_id, 'mined');
  // the shop's receiving address: an app asks to be paid only at its own (issue 40, item 1)
  await run(
    deploy,
    'receiving-address',
    'add',
    '--app-id',
    app.app_id,
    '--chain',
    'worldchain',
    '--address',
    `0x${'2'.repeat(40)}`,
  );
  // the longest expiry, so the request stays pending through a whole run
  const created = await fetch(`${deploy.origins.transactions}/api/v2/client/payment-requests`, {
    method: 'POST',
    headers: { authorization: `Bearer ${app.api_key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      reference: 'bench-request',
      chain: 'worldchain',
      token: 'USDCE',
      to: `0x${'2'.repeat(40)}`,
      token_amount: '1500000',
      expires_in: 86400,
    }),
  });
  if (created.status !== 201) throw new Error(`payment request: ${created.status} ${await created.text()}`);
  const request = (await created.json()) as { id: string };
  return {
    appId: app.app_id,
    clientSecret: app.client_secret,
    apiKey: app.api_key,
    transactionId: tx.transaction_id,
    paymentRequestId: request.id,
    resourceUri: RESOURCE_URI,
    x402: await x402Bodies(64),
  };
}

/** Sets a price by hand (`pnpm manage price set`): what a feed's new price does to every stream. */
export async function setPrice(deploy: Deployment, amount: string): Promise<void> {
  await run(deploy, 'price', 'set', '--token', 'WLD', '--fiat', 'USD', '--amount', amount);
}

/** What signIn gives: what needs the person signed in. */
type SignedIn =
  'sessionCookie' | 'accessToken' | 'pkce' | 'dpop' | 'resourceAccessToken' | 'newRefreshToken' | 'newCibaRequest';

/** Signs in once through the pages (sign-in, consent), keeps the session cookie, and gets an access token. */
export async function signIn(
  identity: string,
  issuer: string,
  appId: string,
  clientSecret: string,
): Promise<Pick<AttestSeed, SignedIn>> {
  const jar = new CookieJar();
  const pair = pkce();
  const browser = new Browser(identity, jar.fetch);
  const { location } = await browser.signIn(`${identity}${authorizePath(appId, pair.challenge)}`, USER);
  const exchange = async (found: string | undefined, headers: Record<string, string> = {}) => {
    const { code, problem } = codeFrom(found);
    if (!code) throw new Error(`sign-in did not return a code: ${problem}`);
    return expectJson<{ access_token: string; token_type: string; refresh_token?: string }>(
      await fetch(`${identity}/token`, {
        method: 'POST',
        headers: {
          authorization: basicAuth(appId, clientSecret),
          'content-type': 'application/x-www-form-urlencoded',
          ...headers,
        },
        body: form({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT_URI,
          code_verifier: pair.verifier,
        }),
      }),
      'POST /token',
    );
  };
  const tokens = await exchange(location);
  // a second code with the session alone, exchanged with a DPoP proof: a DPoP-bound token
  const again = await jar.fetch(`${identity}${authorizePath(appId, pair.challenge)}`, { redirect: 'manual' });
  const key = dpopKey();
  const bound = await exchange(again.headers.get('location') ?? undefined, {
    dpop: dpopProof(key, 'POST', `${issuer}/token`),
  });
  if (bound.token_type !== 'DPoP') throw new Error(`POST /token with a DPoP proof: token_type ${bound.token_type}`);
  // last, the person's consent to the resource too, and a token for it (issue 42: token exchange's subject)
  const forResource = await browser.signIn(
    `${identity}${authorizePath(appId, pair.challenge, { scope: `${SCOPE} api:read`, resource: RESOURCE_URI })}`,
    USER,
  );
  const resourceTokens = await exchange(forResource.location);
  // the consent to offline_access and the resource's scope, once through the consent page; then each new
  // refresh token family is a code of the session alone, exchanged (the refresh-token row's pool)
  const offline = await browser.signIn(`${identity}${refreshAuthorizePath(appId, pair.challenge)}`, USER);
  const first = await exchange(offline.location);
  if (!first.refresh_token) throw new Error('POST /token with offline_access: no refresh_token');
  const newRefreshToken = async () => {
    const res = await jar.fetch(`${identity}${refreshAuthorizePath(appId, pair.challenge)}`, { redirect: 'manual' });
    const { refresh_token } = await exchange(res.headers.get('location') ?? undefined);
    if (!refresh_token) throw new Error('POST /token with offline_access: no refresh_token');
    return refresh_token;
  };
  // CIBA's login_hint: the person's pairwise sub for the app, as the app knows it (its access token's sub)
  const sub = (JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url').toString()) as { sub: string })
    .sub;
  const newCibaRequest = async () =>
    (
      await expectJson<{ auth_req_id: string }>(
        await fetch(`${identity}/bc-authorize`, {
          method: 'POST',
          headers: {
            authorization: basicAuth(appId, clientSecret),
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: form({ scope: 'openid', login_hint: sub, binding_message: 'bench', requested_expiry: '1800' }),
        }),
        'POST /bc-authorize',
      )
    ).auth_req_id;
  return {
    newRefreshToken,
    newCibaRequest,
    sessionCookie: jar.header(),
    accessToken: tokens.access_token,
    pkce: pair,
    dpop: { key, accessToken: bound.access_token },
    resourceAccessToken: resourceTokens.access_token,
  };
}

/** Transaction id number i of a bulk set: 0x, a one-digit set tag, then i in hex (64 hex digits in all). */
export function bulkTransactionId(tag: number, i: number): string {
  return `0x${tag.toString(16)}${i.toString(16).padStart(63, '0')}`;
}

/** Inserts transactions 1..count of set `tag` for the app (status as given, no hash so no chain watching). */
export async function insertTransactions(
  db: Queryable,
  appId: string,
  tag: number,
  count: number,
  status: 'pending' | 'mined',
): Promise<void> {
  const chunk = 100_000;
  for (let start = 1; start <= count; start += chunk) {
    const end = Math.min(count, start + chunk - 1);
    await db.query(
      `INSERT INTO transactions (id, app_id, type, reference, transaction_hash, status, from_address, to_address, chain, token, token_amount)
       SELECT '0x' || $2 || lpad(to_hex(i), 63, '0'), $1, 'pay', 'bench-' || $2 || '-' || i, NULL, $3,
              '0x' || repeat('1', 40), '0x' || repeat('2', 40), 'worldchain', 'USDCE', 1000000 + i
       FROM generate_series($4::int, $5::int) AS i`,
      [appId, tag.toString(16), status, start, end],
    );
  }
}

/** Inserts `count` older observations spread over the pairs the seed feed provides (never the latest: an hour old and more). */
export async function insertQuotes(db: Queryable, count: number): Promise<void> {
  const pairs = await db.query<{ token: string; fiat: string }>(
    'SELECT DISTINCT token, fiat FROM quotes ORDER BY token, fiat',
  );
  if (!pairs.length) throw new Error('no quotes yet: the seed feed has not run');
  const tokens = pairs.map((p) => p.token);
  const fiats = pairs.map((p) => p.fiat);
  const chunk = 100_000;
  for (let start = 1; start <= count; start += chunk) {
    const end = Math.min(count, start + chunk - 1);
    await db.query(
      `INSERT INTO quotes (token, fiat, amount, decimals, source, observed_at)
       SELECT ($1::text[])[1 + i % $3], ($2::text[])[1 + i % $3], 1000000 + i, 6, 'bench', now() - interval '1 hour' - make_interval(secs => i)
       FROM generate_series($4::int, $5::int) AS i`,
      [tokens, fiats, pairs.length, start, end],
    );
  }
}

/** Stored identity rows of the growth rows: users, apps and sessions (each session of one of the users). */
export interface IdentityRows {
  users: number;
  apps: number;
  sessions: number;
}

/**
 * Inserts `count` users, apps and sessions (ids shaped as the service makes them: usr_/app_ and 32 hex
 * digits; session ids and cookie hashes 64 hex digits, distinct), in chunks of 100,000 rows per statement. The
 * users have no password (as a passkey-only account) and the apps a placeholder secret hash that no
 * secret matches: none of them can sign in, they are only there to be stored. Sessions last a day.
 */
export async function insertIdentityRows(db: Queryable, count: IdentityRows): Promise<void> {
  const chunk = 100_000;
  const chunks = async (n: number, sql: string) => {
    for (let start = 1; start <= n; start += chunk) await db.query(sql, [start, Math.min(n, start + chunk - 1)]);
  };
  await chunks(
    count.users,
    `INSERT INTO users (id, username, password_hash, verification_level)
     SELECT 'usr_' || lpad(to_hex(i), 32, '0'), 'bulk-' || i, NULL, CASE WHEN i % 2 = 0 THEN 'orb' ELSE 'device' END
     FROM generate_series($1::int, $2::int) AS i`,
  );
  await chunks(
    count.apps,
    `INSERT INTO apps (id, name, secret_hash, redirect_uris)
     SELECT 'app_' || lpad(to_hex(i), 32, '0'), 'Bulk ' || i, md5(i::text) || md5(i::text), ARRAY['https://bulk-' || i || '.example/callback']
     FROM generate_series($1::int, $2::int) AS i`,
  );
  // the sessions belong to the bulk users, i-th session to user 1 + (i - 1) mod users
  if (count.sessions && !count.users) throw new Error('bulk sessions need bulk users');
  for (let start = 1; start <= count.sessions; start += chunk)
    await db.query(
      `INSERT INTO sessions (id, cookie_hash, user_id, auth_time, amr, client_ids, created_at, last_seen_at, expires_at)
       SELECT lpad(to_hex(i), 64, '0'), 'c' || lpad(to_hex(i), 63, '0'), 'usr_' || lpad(to_hex(1 + (i - 1) % $3), 32, '0'),
              now(), ARRAY['pwd'], '{}', now(), now(), now() + interval '1 day'
       FROM generate_series($1::int, $2::int) AS i`,
      [start, Math.min(count.sessions, start + chunk - 1), count.users],
    );
}

/**
 * After a bulk insert: VACUUM ANALYZE the table, as autovacuum would on its own some time later, then a
 * CHECKPOINT to write the pages both dirtied, so that neither autovacuum nor the checkpointer runs (on
 * either core: Postgres is not pinned) while a row is being measured.
 */
export async function settle(db: Queryable, ...tables: GrowthTable[]): Promise<void> {
  for (const table of tables) await db.query(`VACUUM ANALYZE ${table}`);
  await db.query('CHECKPOINT');
}

type GrowthTable = 'transactions' | 'quotes' | 'users' | 'apps' | 'sessions';

export async function countRows(db: Queryable, table: GrowthTable): Promise<number> {
  const [row] = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table}`);
  return Number(row.n);
}
