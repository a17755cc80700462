import {
  answeredRequest,
  expectMalformedSegmentRefused,
  listen,
  MALFORMED_SEGMENTS,
  type Listening,
} from '@attest/testing';
import { pricesHarness, type PricesHarness } from './support';

const MALFORMED = MALFORMED_SEGMENTS;

/** Issue #9: malformed percent-encoding in the path is a 400 naming the parameter, never a 500. */
describe('prices: hostile input', () => {
  let h: PricesHarness;
  let server: Listening;
  beforeAll(async () => {
    h = await pricesHarness();
    server = await listen(h.publicApp);
  });
  afterAll(async () => {
    await server.close();
    await h.close();
  });

  const get = (target: string) => answeredRequest(server.port, { method: 'GET', target });

  it.each(MALFORMED)(
    'GET /public/v1/prices/latest/%s answers 400 invalid_parameter naming the path segment',
    async (segment) => {
      const res = await get(`/public/v1/prices/latest/${segment}?fiatCurrencies=USD`);
      expectMalformedSegmentRefused(res, 'native');
    },
  );

  it('still serves a well-formed percent-encoded path', async () => {
    const res = await get('/public/v1/prices/latest/%77ld?fiatCurrencies=USD');
    expect(res.status).toBe(200);
    expect(Object.keys(JSON.parse(res.text).result.prices)).toEqual(['WLD']);
  });

  it('answers malformed percent-encoding in the query with 400, not a 500', async () => {
    const res = await get('/public/v1/prices/latest/wld?fiatCurrencies=%ff%fe');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ attribute: 'fiatCurrencies' });
  });
});
