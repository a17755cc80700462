import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { encrypt } from '@attest/common';
import { freePort } from '../packages/common/test/support/throwaway';
import {
  ADMIN_TOKEN,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from '../services/identity/test/support';
import { delegationClient, type Client } from '../services/identity/test/delegation-support';
import { ReceivingAddressService, signatureVerifier } from '../services/transactions/src/receiving-addresses';
import {
  apiKeyFor,
  newAppId,
  transactionsHarness,
  type TransactionsHarness,
} from '../services/transactions/test/support';
import { localChain, type LocalChain } from '../services/transactions/test/support/local-chain';
import {
  deployX402Token,
  newAccount,
  TOKEN_NAME,
  TOKEN_VERSION,
  newKey,
  requirementsFor,
  signedPayment,
  type X402Chain,
} from '../services/transactions/test/support/x402';

type OpenIdClient = typeof import('openid-client');

const KEY_ENCRYPTION_KEY = 'x402-human-key-encryption-key-0123456789abc';
/** The seller's API, registered at Attest as a resource: the delegated tokens' audience. */
const SHOP = 'https://shop.example.com/api';
const ORB = 'urn:attest:loa:orb';
const DEVICE = 'urn:attest:loa:device';

/**
 * Issue 43, "Proof of the human behind the agent" (the attest-human x402 extension): the identity service
 * issues a real delegated access token (a person's token for the seller's resource, exchanged by an agent:
 * RFC 8693, with act); the seller asks for it in the requirements' extra; the buyer puts it in the payment
 * payload's extension; the transactions service (apart from identity: it fetches identity's JWKS over HTTP)
 * verifies it and settles on a local chain, and the recorded transaction carries the person's pairwise id
 * with the agent. Refused: no token, another audience, a level below the one asked, an expired token, a
 * token without act, a bad signature.
 */
describe('x402 attest-human: the verified person behind the agent (identity + transactions + ganache)', () => {
  let oidc: OpenIdClient;
  let identity: IdentityHarness;
  let server: Server;
  let issuer: string;
  /** Moves identity's clock (issued tokens' iat and exp). */
  let clockOffsetMs = 0;
  let web: Client;
  let agent: Client;
  let person: { username: string; password: string; user_id: string };
  let lowLevel: { username: string; password: string; user_id: string };
  let signedIn: { username: string; password: string };

  let chain: LocalChain;
  let x402: X402Chain;
  let tx: TransactionsHarness;
  const appId = newAppId();
  let apiKey: string;
  const seller = newAccount().address;
  const relayer = newKey();

  beforeAll(async () => {
    oidc = await import('openid-client');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    identity = await identityHarness({ BASE_URL: issuer }, {}, { now: () => Date.now() + clockOffsetMs });
    await new Promise<void>((resolve) => {
      server = identity.publicApp.listen(port, '127.0.0.1', () => resolve());
    });
    const admin = (path: string) => request(identity.adminApp).post(path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    web = (
      await admin('/admin/apps')
        .send({ name: 'Shop assistant web', redirect_uris: [REDIRECT_URI] })
        .expect(201)
    ).body as Client;
    agent = (
      await admin('/admin/apps')
        .send({ name: 'Buying agent', redirect_uris: [REDIRECT_URI], may_act_for_users: true })
        .expect(201)
    ).body as Client;
    await admin('/admin/resources')
      .send({ uri: SHOP, name: 'Shop', scopes: ['shop:buy'] })
      .expect(201);
    person = await createUser(identity); // verified with the orb
    lowLevel = await createUser(identity, { verification_level: 'device' });

    chain = await localChain();
    x402 = await deployX402Token(chain);
    await x402.fund(relayer.address, 10n ** 18n);
    tx = await transactionsHarness({
      CHAIN_RPC_URL: chain.url,
      CHAIN_TOKENS: JSON.stringify({ worldchain: { USDC: { address: x402.token, decimals: 6 } } }),
      CHAIN_FINALITY: '1',
      KEY_ENCRYPTION_KEY,
      X402_RELAYER_KEY: encrypt(KEY_ENCRYPTION_KEY, relayer.key),
      X402_IDENTITY_ISSUER: issuer,
      // the identity service listens on 127.0.0.1 (localhost may resolve to ::1 first)
      X402_IDENTITY_JWKS_URL: `http://127.0.0.1:${port}/jwks`,
    });
    apiKey = (await apiKeyFor(tx, appId)).api_key;
    await new ReceivingAddressService(tx.storage.db, signatureVerifier({})).addByOperator(appId, 'worldchain', seller, {
      type: 'operator',
      id: 'test',
    });
  }, 180000);
  afterAll(async () => {
    await tx?.close();
    await chain?.close();
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await identity?.close();
  });

  const te = () => delegationClient(oidc, () => ({ h: identity, issuer, user: signedIn }));
  /** The person signs in to the web app for the shop (their token for SHOP), and the agent exchanges it. */
  async function tokensOf(user: { username: string; password: string }) {
    signedIn = user;
    const personal = (await te().signIn(web, 'openid shop:buy', SHOP)).access_token;
    const delegated = (await te().exchange(agent, personal, { resource: SHOP })).access_token;
    return { personal, delegated };
  }
  const claimsOf = (jwt: string) =>
    JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;

  /** The seller's requirements, asking for a person at `acr` behind the agent, for `audience`. */
  const asking = (amount: bigint, human: Record<string, unknown> = { audience: SHOP, acr: ORB }) => {
    const base = requirementsFor(x402.token, seller, amount);
    return { ...base, extra: { ...base.extra, 'attest-human': human } } as PaymentRequirements;
  };
  /** The buyer's payment, with the delegated token in the attest-human extension (none when null). */
  async function paying(requirements: PaymentRequirements, token: string | null) {
    const buyer = newAccount();
    await x402.mint(buyer.address, BigInt(requirements.amount));
    const payment = await signedPayment(buyer, requirements);
    return {
      buyer,
      payment: (token === null
        ? payment
        : { ...payment, extensions: { 'attest-human': { info: { token } } } }) as PaymentPayload,
    };
  }
  const call = (path: 'verify' | 'settle', payment: PaymentPayload, requirements: PaymentRequirements) =>
    request(tx.publicApp)
      .post(`/x402/${path}`)
      .set('Authorization', `Bearer ${apiKey}`)
      .send({ x402Version: 2, paymentPayload: payment, paymentRequirements: requirements });

  it('advertises the extension; verifies and settles a payment by an agent for an orb-verified person; the transaction carries their pairwise id', async () => {
    const supported = await request(tx.publicApp).get('/x402/supported').set('Authorization', `Bearer ${apiKey}`);
    expect(supported.body.extensions).toEqual(['payment-identifier', 'attest-human']);

    const { delegated } = await tokensOf(person);
    const claims = claimsOf(delegated);
    expect(claims).toMatchObject({ iss: issuer, aud: SHOP, acr: ORB, act: { sub: agent.app_id } });
    const asks = asking(1_000_000n);
    const { buyer, payment } = await paying(asks, delegated);
    const human = { sub: claims.sub, agent: agent.app_id };

    const verified = await call('verify', payment, asks);
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({
      isValid: true,
      payer: buyer.address,
      extensions: { 'attest-human': { ...human, acr: ORB } },
    });

    const settled = await call('settle', payment, asks);
    expect(settled.body).toEqual({
      success: true,
      payer: buyer.address,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      network: 'eip155:1337',
      amount: '1000000',
      extra: { transaction_id: expect.any(String) },
      extensions: { 'attest-human': human },
    });
    expect(await x402.balanceOf(seller)).toBe(1_000_000n);
    // the recorded transaction: the person's pairwise id (as the agent knows them) and the agent; no account id
    const rows = await tx.storage.db.query<{ id: string; human_sub: string; human_agent: string }>(
      'SELECT id, human_sub, human_agent FROM transactions WHERE transaction_hash = $1',
      [settled.body.transaction],
    );
    expect(rows).toEqual([{ id: settled.body.extra.transaction_id, human_sub: claims.sub, human_agent: agent.app_id }]);
    expect(claims.sub).toMatch(/^0x[0-9a-f]{64}$/);
    expect(claims.sub).not.toBe(person.user_id);
    // a retry answers the same outcome
    expect((await call('settle', payment, asks)).body).toEqual(settled.body);

    // an authorization settled without the proof never answers requirements that ask for it
    const plain = requirementsFor(x402.token, seller, 1_000_000n);
    const other = await paying(plain, null);
    expect((await call('settle', other.payment, plain)).body).toMatchObject({ success: true });
    const rows2 = await tx.storage.db.query<{ human_sub: string | null }>(
      'SELECT human_sub FROM transactions WHERE from_address = $1',
      [other.buyer.address.toLowerCase()],
    );
    expect(rows2).toEqual([{ human_sub: null }]);
    expect((await call('settle', other.payment, asking(1_000_000n))).body).toMatchObject({
      success: false,
      errorReason: 'human_proof_missing',
      errorMessage: expect.stringContaining('without the proof of the human behind the agent'),
    });
  });

  it('a device-verified person meets a requirement of device (or of no level), not one of orb', async () => {
    const { delegated } = await tokensOf(lowLevel);
    expect(claimsOf(delegated)).toMatchObject({ acr: DEVICE, act: { sub: agent.app_id } });
    for (const human of [{ audience: SHOP, acr: DEVICE }, { audience: SHOP }]) {
      const asks = asking(1_000_000n, human);
      const { payment } = await paying(asks, delegated);
      expect((await call('verify', payment, asks)).body).toMatchObject({
        isValid: true,
        extensions: { 'attest-human': { sub: claimsOf(delegated).sub, agent: agent.app_id, acr: DEVICE } },
      });
    }
    const asks = asking(1_000_000n, { audience: SHOP, acr: ORB });
    const { buyer, payment } = await paying(asks, delegated);
    expect((await call('verify', payment, asks)).body).toEqual({
      isValid: false,
      invalidReason: 'human_proof_insufficient_acr',
      invalidMessage: `The person's verification (acr ${DEVICE}) is below the ${ORB} this payment asks for.`,
      payer: buyer.address,
    });
    // settle refuses the same, sending nothing and claiming nothing
    const settled = await call('settle', payment, asks);
    expect(settled.body).toMatchObject({
      success: false,
      errorReason: 'human_proof_insufficient_acr',
      transaction: '',
    });
    expect(
      await tx.storage.db.query('SELECT 1 FROM x402_settlements WHERE payer = $1', [buyer.address.toLowerCase()]),
    ).toEqual([]);
    expect(await x402.balanceOf(buyer.address)).toBe(1_000_000n);
  });

  it('refuses a missing token, another audience, an expired token, a token without act, a bad signature and a DPoP-bound token, each with its reason', async () => {
    const { personal, delegated } = await tokensOf(person);
    // exchanged 20 minutes ago: its 15 minutes are over (the person's token, of an hour, still runs)
    clockOffsetMs = -20 * 60 * 1000;
    let expired: string;
    try {
      expired = (await tokensOf(person)).delegated;
    } finally {
      clockOffsetMs = 0;
    }
    // one bound to the agent's DPoP key (RFC 9449): usable only with a proof no facilitator sees
    const config = await te().configFor(agent);
    const dpopBound = (
      await oidc.genericGrantRequest(
        config,
        'urn:ietf:params:oauth:grant-type:token-exchange',
        {
          subject_token: personal,
          subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          resource: SHOP,
        },
        { DPoP: oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair()) },
      )
    ).access_token;
    expect(claimsOf(dpopBound)).toMatchObject({ act: { sub: agent.app_id }, cnf: { jkt: expect.any(String) } });
    const [head, body, signature] = delegated.split('.');
    const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BA' : 'AA'}`;
    const cases: { token: string | null; asks: PaymentRequirements; reason: string; message: RegExp }[] = [
      {
        token: null,
        asks: asking(1_000_000n),
        reason: 'human_proof_missing',
        message: /put an Attest delegated access token .* in paymentPayload\.extensions\["attest-human"\]\.info\.token/,
      },
      {
        token: delegated,
        asks: asking(1_000_000n, { audience: 'https://other-shop.example.com/api', acr: ORB }),
        reason: 'human_proof_audience_mismatch',
        message: /is for https:\/\/shop\.example\.com\/api, not https:\/\/other-shop\.example\.com\/api/,
      },
      { token: expired, asks: asking(1_000_000n), reason: 'human_proof_expired', message: /has expired/ },
      {
        // the person's own token for the shop: no agent acts in it
        token: personal,
        asks: asking(1_000_000n),
        reason: 'human_proof_not_delegated',
        message: /has no act/,
      },
      {
        token: `${head}.${body}.${flipped}`,
        asks: asking(1_000_000n),
        reason: 'human_proof_invalid',
        message: new RegExp(`is not signed by a key of the identity service \\(${issuer}\\)`),
      },
      {
        token: dpopBound,
        asks: asking(1_000_000n),
        reason: 'human_proof_invalid',
        message: /is bound to a DPoP key \(cnf\)/,
      },
      {
        // three parts, each JSON, but null: not a JWT's header and claims
        token: `${Buffer.from('null').toString('base64url')}.${Buffer.from('null').toString('base64url')}.AAAA`,
        asks: asking(1_000_000n),
        reason: 'human_proof_invalid',
        message: /is not a JWT/,
      },
      {
        token: 'not-a-jwt',
        asks: asking(1_000_000n),
        reason: 'human_proof_invalid',
        message: /is not a JWT/,
      },
    ];
    expect(claimsOf(personal).act).toBeUndefined();
    expect(claimsOf(personal).aud).toBe(SHOP);
    expect(claimsOf(expired!).exp as number).toBeLessThan(Date.now() / 1000);
    for (const c of cases) {
      const { buyer, payment } = await paying(c.asks, c.token);
      const verified = await call('verify', payment, c.asks);
      expect({ reason: c.reason, body: verified.body }).toEqual({
        reason: c.reason,
        body: {
          isValid: false,
          invalidReason: c.reason,
          invalidMessage: expect.stringMatching(c.message),
          payer: buyer.address,
        },
      });
      const settled = await call('settle', payment, c.asks);
      expect({ reason: c.reason, body: settled.body }).toEqual({
        reason: c.reason,
        body: expect.objectContaining({ success: false, errorReason: c.reason, transaction: '' }),
      });
    }
    // a requirement that is not one: the seller's mistake, named
    const bad = asking(1_000_000n, { acr: ORB });
    const { payment } = await paying(bad, delegated);
    expect((await call('verify', payment, bad)).body).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_payment_requirements',
      invalidMessage: expect.stringContaining('paymentRequirements.extra["attest-human"].audience'),
    });
    // nothing moved, nothing was recorded for any of them (the first test's two payments only)
    expect(await x402.balanceOf(seller)).toBe(2_000_000n);
    const recorded = await tx.storage.db.query<{ n: string }>(
      'SELECT count(*)::text AS n FROM transactions WHERE app_id = $1',
      [appId],
    );
    expect(recorded[0].n).toBe('2');
  });

  it('@x402/fetch, with a client extension that adds the token, pays an @x402/express route that asks for the person', async () => {
    const { delegated } = await tokensOf(person);
    const buyer = newAccount();
    await x402.mint(buyer.address, 1_000_000n);
    const auth = { Authorization: `Bearer ${apiKey}` };
    const facilitator = new HTTPFacilitatorClient({
      url: `${await listening(tx.publicApp)}/x402`,
      createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
    });
    const shop = express();
    shop.use(
      paymentMiddleware(
        {
          'GET /answer': {
            accepts: {
              scheme: 'exact',
              network: 'eip155:1337',
              payTo: seller,
              price: {
                amount: '1000000',
                asset: x402.token,
                // the requirement the facilitator enforces: the seller sends it itself
                extra: { name: TOKEN_NAME, version: TOKEN_VERSION, 'attest-human': { audience: SHOP, acr: ORB } },
              },
            },
            description: 'An answer for verified people only',
          },
        },
        new x402ResourceServer(facilitator).register('eip155:1337', new ExactEvmServer()),
      ),
    );
    shop.get('/answer', (_req, res) => {
      res.json({ answer: 42 });
    });
    const shopUrl = await listening(shop);
    // the agent: its wallet, and the attest-human extension adding its delegated token where a seller asks
    const client = new x402Client()
      .register('eip155:1337', new ExactEvmClient(buyer))
      .setSpendControls({
        allowedAssets: [{ network: 'eip155:1337', asset: x402.token, maxAmountPerPayment: '1000000' }],
      })
      .registerExtension({
        key: 'attest-human',
        enrichPaymentPayload: async (payload) =>
          payload.accepted.extra?.['attest-human'] === undefined
            ? payload
            : { ...payload, extensions: { ...payload.extensions, 'attest-human': { info: { token: delegated } } } },
      });
    const res = await wrapFetchWithPayment(fetch, client)(`${shopUrl}/answer`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ answer: 42 });
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, payer: buyer.address });
    const rows = await tx.storage.db.query<{ human_sub: string; human_agent: string }>(
      'SELECT human_sub, human_agent FROM transactions WHERE transaction_hash = $1',
      [receipt.transaction],
    );
    expect(rows).toEqual([{ human_sub: claimsOf(delegated).sub, human_agent: agent.app_id }]);

    // without the token the route stays closed: 402 naming the reason, nothing paid
    await x402.mint(buyer.address, 1_000_000n);
    const plain = await wrapFetchWithPayment(
      fetch,
      new x402Client().register('eip155:1337', new ExactEvmClient(buyer)).setSpendControls(false),
    )(`${shopUrl}/answer`);
    expect(plain.status).toBe(402);
    const required = JSON.parse(Buffer.from(plain.headers.get('PAYMENT-REQUIRED')!, 'base64').toString('utf8')) as {
      error?: string;
    };
    expect(required.error).toBe('human_proof_missing');
    expect(await x402.balanceOf(buyer.address)).toBe(1_000_000n);
  });
});

const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** Serves `app` on a free loopback port for the rest of the file; its URL. */
async function listening(app: http.RequestListener): Promise<string> {
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
