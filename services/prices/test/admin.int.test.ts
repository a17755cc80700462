import request from 'supertest';
import { ADMIN_TOKEN, pricesHarness, type PricesHarness } from './support';

interface Entry {
  subject: string | null;
  actor: { type: string; id: string | null };
  detail: Record<string, unknown>;
}

/** The prices admin API: feeds and their freshness, and the audit of what operators set. */
describe('prices admin API and audit trail', () => {
  let h: PricesHarness;
  beforeAll(async () => {
    h = await pricesHarness({
      ADMIN_TOKENS: 'ops-carol:ops-carol-token-0123456789abcdef',
      PRICE_MAX_AGE_SECONDS: '600',
    });
  });
  afterAll(() => h.close());

  const asOps = (method: 'get' | 'post', route: string) =>
    request(h.adminApp)[method](`/admin${route}`).set('Authorization', 'Bearer ops-carol-token-0123456789abcdef');
  async function auditOf(type: string): Promise<Entry[]> {
    return (await h.admin('get', `/audit?type=${type}`).expect(200)).body.events;
  }

  it('lists the feeds with their last run and how fresh the values they set are', async () => {
    await h.admin('post', '/feeds/run').expect(200);
    await h.admin('post', '/prices').send({ token: 'WLD', fiat: 'EUR', amount: '1.25' }).expect(201);
    // an old manual value, past PRICE_MAX_AGE_SECONDS
    await h.storage.db.query(
      "INSERT INTO quotes (token, fiat, amount, decimals, source, observed_at) VALUES ('USDC', 'JPY', 150, 0, 'manual', now() - interval '1 hour')",
    );
    const res = await h.admin('get', '/feeds').expect(200);
    expect(res.body.max_age_seconds).toBe(600);
    const byName = Object.fromEntries(res.body.feeds.map((f: { name: string }) => [f.name, f]));
    expect(Object.keys(byName)).toEqual(['seed', 'manual']);
    expect(byName.seed.last_run).toEqual({ at: expect.any(String), outcome: 'ok', error: null });
    expect(byName.seed.prices.values).toBeGreaterThan(0);
    expect(byName.seed.prices.stale).toBe(0);
    expect(byName.seed.prices.newest_observed_at).toEqual(expect.any(String));
    expect(byName.manual).toMatchObject({ last_run: null, prices: { values: 2, stale: 1 } });
  });

  it('audits prices and FX rates set by hand and feed runs, naming the operator', async () => {
    await asOps('post', '/prices').send({ token: 'WLD', fiat: 'USD', amount: '2.5' }).expect(201);
    await h.admin('post', '/fx').send({ fiat: 'EUR', rate: '0.9' }).expect(201);
    await asOps('post', '/feeds/run').expect(200);
    expect((await auditOf('price.set')).find((e) => e.subject === 'WLD/USD')).toMatchObject({
      actor: { type: 'operator', id: 'ops-carol' },
      detail: { amount: '2.5' },
    });
    expect((await auditOf('fx_rate.set'))[0]).toMatchObject({
      subject: 'USD/EUR',
      actor: { id: 'admin' },
      detail: { rate: '0.9' },
    });
    expect((await auditOf('feeds.run'))[0]).toMatchObject({
      actor: { id: 'ops-carol' },
      detail: { outcome: { seed: 'ok' } },
    });
    expect((await request(h.adminApp).get('/admin/feeds').set('Authorization', `Bearer ${ADMIN_TOKEN}x`)).status).toBe(
      401,
    );
  });

  it('answers a POST without a JSON body with 400 naming the first required field, storing nothing', async () => {
    const rows = async () => (await h.storage.db.query("SELECT 1 FROM quotes WHERE source = 'manual'")).length;
    const before = await rows();
    for (const res of [
      await h.admin('post', '/prices'),
      await h.admin('post', '/prices').type('text').send('token=WLD'),
    ]) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 'required', detail: 'This attribute is required.', attribute: 'token' });
    }
    expect((await h.admin('post', '/fx')).body).toMatchObject({ code: 'required', attribute: 'fiat' });
    expect(await rows()).toBe(before);
  });
});
