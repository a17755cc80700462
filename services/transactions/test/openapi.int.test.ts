import { expectDocumentMatchesRoutes } from '@attest/testing';
import { transactionsHarness } from './support';

it('transactions serves an OpenAPI document whose paths are its routes', async () => {
  const h = await transactionsHarness();
  try {
    await expectDocumentMatchesRoutes(h.publicApp, [
      '/api/v2/client/transaction/{transaction_id}',
      '/api/v2/client/transaction',
    ]);
  } finally {
    await h.close();
  }
});
