import request from 'supertest';
import { apiKeyFor, newAppId, recordTransaction, transactionsHarness, type TransactionsHarness } from './support';

/*
 * Issue 23, item 2: the API-key failure limits hold under concurrency. 80 wrong secrets for one key id,
 * sent at once, compare at most 10 secrets (the key's per-id count shows how many were compared); on the
 * embedded backend and, with TEST_DATABASE_URL and TEST_REDIS_URL, on Postgres and Redis.
 */

const WRONG_SECRET = `sk_${'0'.repeat(48)}`;
const apiKey = (keyId: string, secret: string) => `api_${Buffer.from(`${keyId}:${secret}`).toString('base64url')}`;

describe('parallel wrong API keys (issue 23, item 2)', () => {
  let h: TransactionsHarness;
  const appId = newAppId();
  let key: { api_key: string; key_id: string };
  let tx: Record<string, string>;
  beforeAll(async () => {
    h = await transactionsHarness({ TRUST_PROXY: 'loopback' });
    key = await apiKeyFor(h, appId);
    tx = await recordTransaction(h, appId);
  });
  afterAll(() => h.close());

  const lookup = (from: string, bearer: string) =>
    request(h.publicApp)
      .get(`/api/v2/client/transaction/${tx.transaction_id}`)
      .query({ app_id: appId, type: 'pay' })
      .set('X-Forwarded-For', from)
      .set('Authorization', `Bearer ${bearer}`);

  it('80 wrong secrets for one key id at once: at most 10 compared, the rest 429, the right key refused there', async () => {
    const wrong = apiKey(key.key_id, WRONG_SECRET);
    const answers = await Promise.all(Array.from({ length: 80 }, () => lookup('203.0.113.60', wrong)));
    expect(answers.filter((r) => r.status === 401)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(70);
    const refused = answers.find((r) => r.status === 429)!;
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['ratelimit-policy']).toBe('"per-id-and-address";q=10;w=900');
    expect(refused.headers.ratelimit).toMatch(/^"per-id-and-address";r=0;t=\d+$/);
    expect((await lookup('203.0.113.60', key.api_key)).status).toBe(429);
    const elsewhere = await lookup('198.51.100.60', wrong);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.ratelimit).toMatch(
      /^"per-id-and-address";r=9;t=\d+, "per-id";r=89;t=\d+, "per-address";r=199;t=\d+$/,
    );
    expect((await lookup('198.51.100.61', key.api_key)).status).toBe(200);
  });

  it('parallel right keys are never refused: a right key holds no slot', async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, () => lookup('203.0.113.61', key.api_key)));
    for (const r of answers) expect(r.status).toBe(200);
  });
});
