import request from 'supertest';
import { expectDocumentMatchesRoutes, undocumentedRoutes } from '@attest/testing';
import { pricesHarness } from './support';

it('prices serves an OpenAPI document whose paths are its routes', async () => {
  const h = await pricesHarness();
  try {
    await expectDocumentMatchesRoutes(h.publicApp, [
      '/public/v1/prices/latest/{native}',
      '/public/v1/miniapps/prices',
      '/widget.js',
      '/healthz',
      '/readyz',
      '/openapi.json',
      '/docs',
    ]);
    expect(undocumentedRoutes(h.publicApp)).toEqual([]);
    const doc = (await request(h.publicApp).get('/openapi.json')).body;
    const latest = doc.paths['/public/v1/prices/latest/{native}'].get;
    expect(latest.parameters).toEqual([
      {
        name: 'native',
        in: 'path',
        required: true,
        description: 'The native token, lower case',
        schema: { const: 'wld' },
      },
      expect.objectContaining({ name: 'fiatCurrencies', in: 'query', required: true, example: 'USD,EUR' }),
      expect.objectContaining({ name: 'cryptoCurrencies', in: 'query', required: false }),
    ]);
    expect(Object.keys(latest.responses).sort()).toEqual(['200', '304', '400', '404', '500', '503']);
  } finally {
    await h.close();
  }
});
