import {
  answeredRequest,
  expectMalformedSegmentRefused,
  listen,
  MALFORMED_SEGMENTS,
  type Listening,
} from '@attest/testing';
import { apiKeyFor, newAppId, recordTransaction, transactionsHarness, type TransactionsHarness } from './support';

const MALFORMED = MALFORMED_SEGMENTS;

/** Issue #9: malformed percent-encoding in the path is a 400 naming the parameter, never a 500. */
describe('transactions: hostile input', () => {
  let h: TransactionsHarness;
  let server: Listening;
  const appId = newAppId();
  let key: { api_key: string };
  let tx: Record<string, string>;
  beforeAll(async () => {
    h = await transactionsHarness();
    key = await apiKeyFor(h, appId);
    tx = await recordTransaction(h, appId);
    server = await listen(h.publicApp);
  });
  afterAll(async () => {
    await server.close();
    await h.close();
  });

  const get = (target: string) =>
    answeredRequest(server.port, { method: 'GET', target, headers: [['Authorization', `Bearer ${key.api_key}`]] });

  it.each(MALFORMED)(
    'GET /api/v2/client/transaction/%s answers 400 invalid_parameter naming transaction_id',
    async (id) => {
      const res = await get(`/api/v2/client/transaction/${id}?app_id=${appId}&type=pay`);
      expectMalformedSegmentRefused(res, 'transaction_id');
    },
  );

  it('still decodes a well-formed percent-encoded id', async () => {
    const encoded = tx.transaction_id.replace(/^0x/, '%30%78');
    const res = await get(`/api/v2/client/transaction/${encoded}?app_id=${appId}&type=pay`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ reference: tx.reference, app_id: appId });
  });

  it('answers malformed percent-encoding in the query without a 500', async () => {
    const type = await get(`/api/v2/client/transaction/${tx.transaction_id}?app_id=${appId}&type=%ff%fe`);
    expect(type.status).toBe(400);
    expect(JSON.parse(type.text)).toMatchObject({ code: 'invalid_parameter', attribute: 'type' });
    const app = await get(`/api/v2/client/transaction/${tx.transaction_id}?app_id=%zz&type=pay`);
    expect(app.status).toBe(403);
    expect(JSON.parse(app.text)).toMatchObject({ code: 'invalid_app', attribute: 'app_id' });
  });
});
