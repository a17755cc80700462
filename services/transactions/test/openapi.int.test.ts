import request from 'supertest';
import { checkedDocument, COMMON_ADMIN_PATHS, COMMON_PUBLIC_PATHS, withHarness } from '@attest/testing';
import { ADMIN_TOKEN, transactionsHarness } from './support';

it('transactions serves an OpenAPI document whose paths are its routes', () =>
  withHarness(transactionsHarness, async (h) => {
    const doc = await checkedDocument(h.publicApp, [
      '/api/v2/client/transaction/{transaction_id}',
      '/api/v2/client/transaction',
      '/api/v2/client/payment-requests',
      '/api/v2/client/payment-requests/{id}',
      '/api/v2/client/payment-requests/{id}/cancel',
      '/api/v2/client/payment-requests/{id}/refunds',
      '/api/v2/client/payment-policy',
      '/pay/{payment_request_id}',
      '/pay/{payment_request_id}/events',
      '/pay/assets/checkout.js',
      '/pay/assets/checkout.css',
      '/api/v2/client/transactions',
      '/api/v2/client/webhooks',
      '/api/v2/client/webhooks/{webhook_id}',
      '/api/v2/client/webhooks/{webhook_id}/rotate-secret',
      '/api/v2/client/webhooks/{webhook_id}/disable',
      '/api/v2/client/webhooks/{webhook_id}/enable',
      '/api/v2/client/webhooks/{webhook_id}/test',
      '/api/v2/client/webhooks/{webhook_id}/recover',
      '/api/v2/client/webhooks/{webhook_id}/deliveries',
      '/api/v2/client/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver',
      '/api/v2/client/events',
      '/api/v2/client/events/{event_id}',
      '/api/v2/client/receiving-addresses',
      '/api/v2/client/receiving-addresses/challenges',
      '/api/v2/client/receiving-addresses/{chain}/{address}',
      '/x402/supported',
      '/x402/verify',
      '/x402/settle',
      ...COMMON_PUBLIC_PATHS,
    ]);
    const lookup = doc.paths['/api/v2/client/transaction/{transaction_id}'].get;
    expect(
      lookup.parameters.map((p: { name: string; in: string; required: boolean }) => [p.name, p.in, p.required]),
    ).toEqual([
      ['transaction_id', 'path', true],
      ['app_id', 'query', true],
      ['type', 'query', true],
    ]);
    expect(Object.keys(lookup.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '405',
      '429',
      '500',
      '503',
    ]);
    const record = doc.paths['/api/v2/client/transaction'].post;
    // the joi object that validates the body, converted
    const body = record.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.required).toEqual(expect.arrayContaining(['type', 'reference', 'from', 'to']));
    // issue 44: app_id optional (the key names the app), token_amount optional with payment_request_id
    expect(body.required).not.toContain('app_id');
    expect(Object.keys(body.properties)).toEqual(expect.arrayContaining(['app_id', 'token_amount']));
    expect(body.properties.token_amount.pattern).toBe('^\\d{1,78}$');
    expect(Object.keys(record.responses).sort()).toEqual([
      '200',
      '201',
      '400',
      '401',
      '403',
      '404',
      '405',
      '409',
      '413',
      '415',
      '429',
      '500',
      '503',
    ]);
    expect(record.responses['401'].headers).toHaveProperty('RateLimit');
    // the refusal of a `to` that is not the app's receiving address is documented (issue 40, item 1)
    expect(record.responses['403'].description).toContain('receiving_address_not_registered');
    expect(doc.paths['/api/v2/client/payment-requests'].post.responses['403'].description).toContain(
      'receiving_address_not_registered',
    );
  }));

it('transactions serves its admin API as an OpenAPI document on the admin port, every /admin route in it', () =>
  withHarness(transactionsHarness, async (h) => {
    const doc = await checkedDocument(h.adminApp, [
      '/admin/apps/{app_id}/api-keys',
      '/admin/apps/{app_id}',
      '/admin/apps/{app_id}/disable',
      '/admin/apps/{app_id}/enable',
      '/admin/apps/{app_id}/payment-policy',
      '/admin/api-keys/{key_id}/revoke',
      '/admin/transactions',
      '/admin/transactions/{id}',
      '/admin/transactions/{id}/status',
      '/admin/apps/{app_id}/webhooks',
      '/admin/apps/{app_id}/webhooks/replay',
      '/admin/webhooks/{webhook_id}',
      '/admin/webhooks/{webhook_id}/disable',
      '/admin/webhooks/{webhook_id}/enable',
      '/admin/webhooks/{webhook_id}/rotate-secret',
      '/admin/webhooks/{webhook_id}/deliveries',
      '/admin/webhook-deliveries/{delivery_id}/redeliver',
      '/admin/webhooks/{webhook_id}/test',
      '/admin/webhooks/{webhook_id}/recover',
      '/admin/apps/{app_id}/payment-requests',
      '/admin/apps/{app_id}/payment-requests/{id}',
      '/admin/apps/{app_id}/events',
      '/admin/apps/{app_id}/receiving-addresses',
      '/admin/apps/{app_id}/receiving-addresses/challenges',
      '/admin/apps/{app_id}/receiving-addresses/proofs',
      '/admin/apps/{app_id}/receiving-addresses/{chain}/{address}',
      '/admin/x402/relayer-key',
      ...COMMON_ADMIN_PATHS,
    ]);
    expect(doc.components.securitySchemes).toEqual({
      adminToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    const createKey = doc.paths['/admin/apps/{app_id}/api-keys'].post;
    expect(createKey.security).toEqual([{ adminToken: [] }]);
    // app_id as the route validates it, and a body that may be left out
    expect(createKey.parameters).toEqual([
      { name: 'app_id', in: 'path', required: true, schema: { type: 'string', pattern: '^app_[0-9a-f]{32}$' } },
    ]);
    expect(createKey.requestBody.required).toBe(false);
    expect(Object.keys(createKey.responses).sort()).toEqual(['201', '400', '401', '405', '413', '415', '500', '503']);
    const record = doc.paths['/admin/transactions'].post;
    const body = record.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['app_id', 'type', 'reference', 'from', 'to', 'chain', 'token', 'token_amount']);
    expect(body.properties.status).toMatchObject({ enum: ['pending', 'mined', 'failed'], default: 'pending' });
    expect(Object.keys(record.responses).sort()).toEqual([
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
    const setStatus = doc.paths['/admin/transactions/{id}/status'].post;
    expect(Object.keys(setStatus.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '404',
      '405',
      '409',
      '413',
      '415',
      '500',
      '503',
    ]);
    const deliveries = doc.paths['/admin/webhooks/{webhook_id}/deliveries'].get;
    expect(deliveries.parameters.map((p: { name: string; in: string }) => `${p.in} ${p.name}`)).toEqual([
      'path webhook_id',
      'query limit',
    ]);
    // a 401 from an admin route matches its document too
    const denied = await request(h.adminApp).get('/admin/transactions').expect(401);
    expect(denied.headers['www-authenticate']).toBe('Bearer realm="admin"');
    await request(h.adminApp).get('/admin/audit').set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
  }));
