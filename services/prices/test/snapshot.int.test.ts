import { createHash } from 'node:crypto';
import path from 'node:path';
import request from 'supertest';
import { isAppError, type Db, type InvalidationBus } from '@attest/common';
import { countingDb, replicaPair, testBus, testDatabase, type Replicas } from '@attest/testing';
import { priceStore, PriceService } from '../src/prices';
import { pricesHarness, type PricesHarness } from './support';

// each embedded Postgres takes seconds to start, many more on a loaded machine
jest.setTimeout(120000);

const MIGRATIONS = path.join(__dirname, '..', 'migrations');

const get = (h: PricesHarness, query: Record<string, string>) =>
  request(h.publicApp).get('/public/v1/prices/latest/wld').query(query);

describe('prices from a snapshot', () => {
  let db: Db;
  let counted: ReturnType<typeof countingDb>;
  let h: PricesHarness;
  beforeAll(async () => {
    db = await testDatabase('prices', MIGRATIONS);
    counted = countingDb(db);
    h = await pricesHarness({}, { db: counted.db });
  });
  afterAll(async () => {
    await h.close();
    await db.close();
  });

  it('answers with the same bytes and validators as before: body, ETag of the body, Content-Type', async () => {
    const res = await get(h, { fiatCurrencies: 'USD,EUR', cryptoCurrencies: 'WLD,USDCE' });
    // the seed feed gives no time of its own: every price is dated by its one fetch
    const [{ seeded }] = await db.query<{ seeded: Date }>(
      "SELECT max(observed_at) AS seeded FROM quotes WHERE token IN ('WLD', 'USDCE') AND fiat IN ('USD', 'EUR')",
    );
    const at = JSON.stringify(new Date(seeded).toISOString());
    const text =
      '{"result":{"prices":{"WLD":{"USD":{"asset":"USD","amount":"1510763","decimals":6,"symbol":"USD"},' +
      '"EUR":{"asset":"EUR","amount":"1395112","decimals":6,"symbol":"EUR"}},' +
      '"USDCE":{"USD":{"asset":"USD","amount":"1000120","decimals":6,"symbol":"USD"},' +
      '"EUR":{"asset":"EUR","amount":"923514","decimals":6,"symbol":"EUR"}}},' +
      `"observed_at":{"WLD":{"USD":${at},"EUR":${at}},"USDCE":{"USD":${at},"EUR":${at}}}}}`;
    expect(res.status).toBe(200);
    expect(res.text).toBe(text);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(text)));
    expect(res.headers.etag).toBe(`"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`);
    const [{ newest }] = await db.query<{ newest: Date }>(
      "SELECT max(observed_at) AS newest FROM quotes WHERE token IN ('WLD', 'USDCE') AND fiat IN ('USD', 'EUR')",
    );
    expect(res.headers['last-modified']).toBe(new Date(Math.floor(newest.getTime() / 1000) * 1000).toUTCString());
  });

  it('once warm, answers found, cross-rate and absent pairs without touching the database', async () => {
    const queries: Record<string, string>[] = [
      { fiatCurrencies: 'USD,EUR', cryptoCurrencies: 'WLD,USDCE' },
      { fiatCurrencies: 'JPY,IDR' },
      { fiatCurrencies: 'USD,AFN' },
    ];
    const first = await Promise.all(queries.map((q) => get(h, q)));
    expect(first.map((r) => r.status)).toEqual([200, 200, 503]);
    counted.statements.length = 0;
    for (let i = 0; i < 3; i++) {
      const again = await Promise.all(queries.map((q) => get(h, q)));
      expect(again.map((r) => r.text)).toEqual(first.map((r) => r.text));
    }
    expect(counted.statements).toEqual([]);
  });

  it.each([
    ['latestQuotes', 'quotes_source_idx'],
    ['latestFxRates', 'fx_rates_latest_idx'],
  ] as const)(
    '%s reads one row per pair (and source) through %s, whatever the history (1,000,000 rows cost what 100 do)',
    async (method, index) => {
      const sql: string[] = [];
      await priceStore({ query: async (text) => (sql.push(text), []) })[method]();
      const plan = await db.transaction(async (tx) => {
        await tx.query('SET LOCAL enable_seqscan = off');
        const [row] = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql[0]}`);
        return JSON.stringify(row['QUERY PLAN']);
      });
      expect(plan).toContain('"Node Type":"Limit"');
      expect(plan).toMatch(new RegExp(`"Node Type":"Index (Only )?Scan"[^}]*"Index Name":"${index}"`));
    },
  );
});

describe('freshness is judged against the clock, not the snapshot', () => {
  let db: Db;
  let bus: InvalidationBus;
  beforeAll(async () => {
    db = await testDatabase('prices', MIGRATIONS);
    bus = testBus('prices');
  });
  afterAll(async () => {
    await bus.close();
    await db.close();
  });

  it('a price turns 503 when it goes stale, with no write; a cross rate takes over while it is fresh', async () => {
    const t0 = Date.parse('2026-11-20T10:00:00.000Z');
    let now = t0;
    const prices = new PriceService(priceStore(db), bus, 60000, { now: () => now });
    const at = (offsetMs: number, amount: string) => ({
      amount,
      decimals: 6,
      source: 'manual',
      observedAt: new Date(t0 + offsetMs),
    });
    await prices.record({
      quotes: [
        { token: 'WLD', fiat: 'EUR', observation: at(0, '1400000') },
        { token: 'WLD', fiat: 'USD', observation: at(30000, '1500000') },
      ],
      fx: [{ fiat: 'EUR', observation: at(20000, '900000') }],
    });
    const [{ count }] = await db.query<{ count: string }>('SELECT count(*) FROM quotes');
    const amount = async () =>
      JSON.parse((await prices.answer(['WLD'], ['EUR'])).body.toString()).result.prices.WLD.EUR.amount;
    expect(await amount()).toBe('1400000');
    now = t0 + 60000;
    expect(await amount()).toBe('1400000');
    now = t0 + 60001; // the direct quote is stale: USD quote × EUR rate, both fresh
    expect(await amount()).toBe('1350000');
    now = t0 + 80001; // the EUR rate is stale too
    const stale = await prices.answer(['WLD'], ['EUR']).catch((err: unknown) => err);
    expect(isAppError(stale) && [stale.status, stale.code, stale.detail]).toEqual([
      503,
      'price_unavailable',
      'No fresh price for WLD/EUR; try again later.',
    ]);
    expect((await prices.answer(['WLD'], ['USD'])).body.toString()).toContain('"amount":"1500000"');
    now = t0 + 90001;
    await expect(prices.answer(['WLD'], ['USD'])).rejects.toMatchObject({ code: 'price_unavailable' });
    expect((await db.query<{ count: string }>('SELECT count(*) FROM quotes'))[0].count).toBe(count);
  });
});

describe('two instances sharing the database and the invalidation bus', () => {
  let a: PricesHarness;
  let b: PricesHarness;
  let replicas: Replicas<PricesHarness>;
  beforeAll(async () => {
    // a second replica: same database and invalidation bus (see replicaPair)
    replicas = await replicaPair('prices', (shared, which) =>
      pricesHarness(which === 'a' ? {} : { PRICE_FEEDS: 'seed' }, shared),
    );
    ({ a, b } = replicas);
  });
  afterAll(() => replicas?.close());

  it('a price set on one instance is served by it at the next request and by the other within 1 s', async () => {
    const amount = async (h: PricesHarness) =>
      (await get(h, { fiatCurrencies: 'GBP' })).body.result?.prices.WLD.GBP.amount as string;
    expect(await amount(b)).toBe('1189122'); // seed: 1.510763 × 0.7871, half up
    await a.admin('post', '/prices').send({ token: 'WLD', fiat: 'GBP', amount: '1.25' }).expect(201);
    expect(await amount(a)).toBe('1250000');
    const deadline = Date.now() + 1000;
    let seen = await amount(b);
    while (seen !== '1250000' && Date.now() < deadline)
      seen = await new Promise((r) => setTimeout(r, 20)).then(() => amount(b));
    expect(seen).toBe('1250000');
  });
});
