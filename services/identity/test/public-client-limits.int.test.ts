import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import {
  ADMIN_TOKEN,
  browserFlow,
  callbackParams,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

/*
 * Issue 23, item 3: a public client (no secret) is named by anyone, so its failed code exchanges are
 * counted per (client, address) and per address: junk from one address is refused there, and nobody
 * else who uses the app is blocked. A client that authenticated with its secret keeps its per-client limit.
 */

const verifier = randomBytes(32).toString('base64url');
const challenge = createHash('sha256').update(verifier).digest('base64url');
const junkCode = (i: number) => i.toString(16).padStart(64, '0');

describe('failed code exchanges of a public client (issue 23, item 3)', () => {
  let h: IdentityHarness;
  let user: { username: string; password: string };
  beforeAll(async () => {
    h = await identityHarness({
      TRUST_PROXY: 'loopback',
      CODE_FAILURES_PER_CLIENT: '5',
      PUBLIC_CODE_FAILURES_PER_CLIENT_AND_ADDRESS: '5',
      PUBLIC_CODE_FAILURES_PER_ADDRESS: '8',
    });
    user = await createUser(h);
  });
  afterAll(() => h.close());

  async function publicApp(): Promise<string> {
    const res = await request(h.adminApp)
      .post('/admin/apps')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ name: 'SPA', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' });
    expect(res.status).toBe(201);
    return res.body.app_id as string;
  }

  async function codeFor(clientId: string): Promise<string> {
    const res = await browserFlow(
      request.agent(h.publicApp),
      {
        response_type: 'code',
        scope: 'openid',
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      },
      user,
    );
    return callbackParams(res).code;
  }

  const exchange = (from: string, clientId: string, code: string) =>
    request(h.publicApp).post('/token').set('X-Forwarded-For', from).type('form').send({
      grant_type: 'authorization_code',
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code,
      code_verifier: verifier,
    });

  function expectRefused(res: request.Response, policy: string, limit: number): void {
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ code: 'too_many_requests', error: 'temporarily_unavailable' });
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expect(res.headers['ratelimit-policy']).toBe(`"${policy}";q=${limit};w=900`);
    expect(res.headers.ratelimit).toBe(`"${policy}";r=0;t=${retryAfter}`);
  }

  it('junk from address A makes A 429, while a real exchange from address B still succeeds', async () => {
    const spa = await publicApp();
    const junk = await Promise.all(Array.from({ length: 20 }, (_, i) => exchange('203.0.113.70', spa, junkCode(i))));
    const failed = junk.filter((r) => r.status === 400 && r.body.error === 'invalid_grant');
    expect(failed).toHaveLength(5);
    expect(failed[0].headers['ratelimit-policy']).toBe(
      '"per-public-client-and-address-codes";q=5;w=900, "per-address-codes";q=8;w=900',
    );
    expect(junk.filter((r) => r.status === 429)).toHaveLength(15);
    expectRefused(
      junk.find((r) => r.status === 429)!,
      'per-public-client-and-address-codes',
      5,
    );
    // A is refused even with a real code (before it is looked up, so the code still works elsewhere)
    const code = await codeFor(spa);
    expectRefused(await exchange('203.0.113.70', spa, code), 'per-public-client-and-address-codes', 5);
    const fromB = await exchange('198.51.100.70', spa, code);
    expect(fromB.status).toBe(200);
    expect(fromB.body.token_type).toBe('Bearer');
  });

  it('one address is limited across public clients, without touching other addresses', async () => {
    const [first, second] = [await publicApp(), await publicApp()];
    for (let i = 0; i < 5; i++) expect((await exchange('203.0.113.71', first, junkCode(i))).status).toBe(400);
    for (let i = 0; i < 3; i++) expect((await exchange('203.0.113.71', second, junkCode(i))).status).toBe(400);
    expectRefused(await exchange('203.0.113.71', second, junkCode(9)), 'per-address-codes', 8);
    expect((await exchange('198.51.100.71', second, await codeFor(second))).status).toBe(200);
  });

  it('a client that authenticated with its secret keeps its per-client limit', async () => {
    const res = await request(h.adminApp)
      .post('/admin/apps')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ name: 'Backend', redirect_uris: [REDIRECT_URI] });
    const client = res.body as { app_id: string; client_secret: string };
    const auth = `Basic ${Buffer.from(`${client.app_id}:${client.client_secret}`).toString('base64')}`;
    const send = (from: string, i: number) =>
      request(h.publicApp)
        .post('/token')
        .set('X-Forwarded-For', from)
        .set('Authorization', auth)
        .type('form')
        .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code: junkCode(i) });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => send(`203.0.113.${80 + i}`, i)));
    expect(answers.filter((r) => r.status === 400)).toHaveLength(5);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(7);
    expectRefused(
      answers.find((r) => r.status === 429)!,
      'per-client-codes',
      5,
    );
  });
});
