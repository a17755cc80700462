import { describeFuzz, type FuzzSurface } from '@attest/testing';
import { apiKeyFor, newAppId, recordTransaction, transactionsHarness, type TransactionsHarness } from './support';

const TEST_FILE = 'services/transactions/test/fuzz.int.test.ts';

/** Issue #9: random hostile requests to every public transactions endpoint; see docs/reliability.md. */
describeFuzz('transactions', TEST_FILE, {
  harness: () => transactionsHarness(),
  async surface(h: TransactionsHarness): Promise<FuzzSurface> {
    const appId = newAppId();
    const key = await apiKeyFor(h, appId);
    const pay = await recordTransaction(h, appId);
    const send = await recordTransaction(h, appId, { type: 'sendTransaction' });
    const ids = [pay.transaction_id, send.transaction_id, pay.transaction_id.toUpperCase().replace('0X', '0x')];
    const bearer: [string, string] = ['Authorization', `Bearer ${key.api_key}`];
    return {
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
  },
});
