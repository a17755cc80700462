import request from 'supertest';
import { expectDocumentMatchesRoutes, undocumentedRoutes } from '@attest/testing';
import { transactionsHarness } from './support';

it('transactions serves an OpenAPI document whose paths are its routes', async () => {
  const h = await transactionsHarness();
  try {
    await expectDocumentMatchesRoutes(h.publicApp, [
      '/api/v2/client/transaction/{transaction_id}',
      '/api/v2/client/transaction',
      '/healthz',
      '/readyz',
      '/openapi.json',
      '/docs',
    ]);
    expect(undocumentedRoutes(h.publicApp)).toEqual([]);
    const doc = (await request(h.publicApp).get('/openapi.json')).body;
    const lookup = doc.paths['/api/v2/client/transaction/{transaction_id}'].get;
    expect(
      lookup.parameters.map((p: { name: string; in: string; required: boolean }) => [p.name, p.in, p.required]),
    ).toEqual([
      ['transaction_id', 'path', true],
      ['app_id', 'query', true],
      ['type', 'query', true],
    ]);
    expect(Object.keys(lookup.responses).sort()).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    const record = doc.paths['/api/v2/client/transaction'].post;
    // the joi object that validates the body, converted
    const body = record.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.required).toEqual(
      expect.arrayContaining(['app_id', 'type', 'reference', 'token_amount', 'from', 'to']),
    );
    expect(body.properties.token_amount.pattern).toBe('^\\d{1,78}$');
    expect(Object.keys(record.responses).sort()).toEqual([
      '200',
      '201',
      '400',
      '401',
      '403',
      '409',
      '413',
      '415',
      '429',
      '500',
      '503',
    ]);
    expect(record.responses['401'].headers).toHaveProperty('RateLimit');
  } finally {
    await h.close();
  }
});
