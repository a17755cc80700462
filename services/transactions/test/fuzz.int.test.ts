import {
  fuzzRuns,
  fuzzSeeds,
  fuzzService,
  listen,
  newStats,
  reportStats,
  type FuzzSurface,
  type Listening,
} from '@attest/testing';
import { apiKeyFor, newAppId, recordTransaction, transactionsHarness, type TransactionsHarness } from './support';

const TEST_FILE = 'services/transactions/test/fuzz.int.test.ts';

/** Issue #9: random hostile requests to every public transactions endpoint; see docs/reliability.md. */
describe('transactions fuzz: hostile input never hangs, never 5xx, always the error shape', () => {
  let h: TransactionsHarness;
  let server: Listening;
  let surface: FuzzSurface;
  const stats = newStats();

  beforeAll(async () => {
    h = await transactionsHarness();
    const appId = newAppId();
    const key = await apiKeyFor(h, appId);
    const pay = await recordTransaction(h, appId);
    const send = await recordTransaction(h, appId, { type: 'sendTransaction' });
    const ids = [pay.transaction_id, send.transaction_id, pay.transaction_id.toUpperCase().replace('0X', '0x')];
    const bearer: [string, string] = ['Authorization', `Bearer ${key.api_key}`];
    surface = {
      endpoints: [
        {
          path: '/api/v2/client/transaction/{}',
          errors: 'json',
          methods: ['GET'],
          values: ids,
          base: [`app_id=${appId}&type=pay`, `app_id=${appId}&type=sendTransaction`],
          names: ['app_id', 'type'],
          headers: [bearer],
        },
        {
          path: '/api/v2/client/transaction',
          errors: 'json',
          methods: ['POST'],
          names: ['app_id', 'type', 'reference', 'transaction_hash', 'chain', 'token', 'to', 'token_amount', 'from'],
          headers: [bearer],
        },
        { path: '/openapi.json', errors: 'json', methods: ['GET'] },
        { path: '/healthz', errors: 'json', methods: ['GET'] },
        { path: '/readyz', errors: 'json', methods: ['GET'] },
      ],
      names: ['app_id', 'type', 'transaction_id'],
      values: [appId, newAppId(), 'pay', 'sendTransaction', 'transfer', ...ids],
      headers: [bearer, ['Authorization', `Bearer ${key.api_key.slice(0, -2)}`]],
    };
    server = await listen(h.publicApp);
  }, 120_000);
  afterAll(async () => {
    reportStats('transactions', stats);
    await server?.close();
    await h?.close();
  });

  it.each(fuzzSeeds())(
    'seed %i',
    async (seed) => {
      const run = await fuzzService(server.port, surface, { seed, runs: fuzzRuns(), testFile: TEST_FILE, stats });
      if (run.failure) throw new Error(run.failure);
    },
    600_000,
  );
});
