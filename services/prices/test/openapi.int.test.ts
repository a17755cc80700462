import request from 'supertest';
import { checkedDocument, COMMON_ADMIN_PATHS, COMMON_PUBLIC_PATHS, withHarness } from '@attest/testing';
import { ADMIN_TOKEN, pricesHarness } from './support';

it('prices serves an OpenAPI document whose paths are its routes', () =>
  withHarness(pricesHarness, async (h) => {
    const doc = await checkedDocument(h.publicApp, [
      '/public/v1/prices/latest/{native}',
      '/public/v1/miniapps/prices',
      '/public/v1/prices/history/{token}',
      '/public/v1/prices/stream',
      '/widget.js',
      ...COMMON_PUBLIC_PATHS,
    ]);
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
      expect.objectContaining({ name: 'change', in: 'query', required: false }),
    ]);
    expect(Object.keys(latest.responses).sort()).toEqual(['200', '304', '400', '404', '405', '429', '500', '503']);
  }));

it('prices serves its admin API as an OpenAPI document on the admin port, every /admin route in it', () =>
  withHarness(pricesHarness, async (h) => {
    const doc = await checkedDocument(h.adminApp, [
      '/admin/prices',
      '/admin/fx',
      '/admin/prices/{token}/{fiat}/history',
      '/admin/feeds',
      '/admin/feeds/run',
      ...COMMON_ADMIN_PATHS,
    ]);
    expect(doc.info.title).toBe('Attest prices admin API');
    expect(doc.components.securitySchemes.adminToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    const set = doc.paths['/admin/prices'].post;
    expect(set.security).toEqual([{ adminToken: [] }]);
    const body = set.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['token', 'fiat', 'amount']);
    expect(body.properties.amount.pattern).toBe('^\\d{1,40}(\\.\\d{1,36})?$');
    expect(Object.keys(set.responses).sort()).toEqual(['201', '400', '401', '405', '413', '415', '500', '503']);
    const audit = doc.paths['/admin/audit'].get;
    expect(audit.parameters.map((p: { name: string }) => p.name)).toEqual(['limit', 'cursor', 'since', 'type']);
    expect(Object.keys(audit.responses).sort()).toEqual(['200', '400', '401', '405', '500', '503']);
    const tokens = doc.paths['/admin/admin-tokens'].post;
    expect(Object.keys(tokens.responses).sort()).toEqual([
      '201',
      '400',
      '401',
      '405',
      '409',
      '413',
      '415',
      '500',
      '503',
    ]);
    expect(Object.keys(doc.paths['/admin/admin-tokens/{name}'].delete.responses).sort()).toEqual([
      '204',
      '401',
      '404',
      '405',
      '500',
      '503',
    ]);
    // a history answer is held to its schema
    const history = await request(h.adminApp)
      .get('/admin/prices/wld/usd/history')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .expect(200);
    expect(Array.isArray(history.body)).toBe(true);
  }));
