import { expectDocumentMatchesRoutes } from '@attest/testing';
import { pricesHarness } from './support';

it('prices serves an OpenAPI document whose paths are its routes', async () => {
  const h = await pricesHarness();
  try {
    await expectDocumentMatchesRoutes(h.publicApp, ['/public/v1/prices/latest/wld', '/public/v1/miniapps/prices']);
  } finally {
    await h.close();
  }
});
