import request from 'supertest';
import { checkedDocument, COMMON_ADMIN_PATHS, COMMON_PUBLIC_PATHS, withHarness } from '@attest/testing';
import { ADMIN_TOKEN, identityHarness } from './support';

it('identity serves an OpenAPI document whose paths are its routes', () =>
  withHarness(identityHarness, async (h) => {
    const doc = await checkedDocument(h.publicApp, [
      '/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server',
      '/jwks',
      '/jwks.json',
      '/authorize',
      '/token',
      '/par',
      '/introspect',
      '/userinfo',
      '/revoke',
      '/register',
      '/register/{client_id}',
      '/logout',
      '/logout/confirm',
      '/signin',
      '/signup',
      '/consent',
      '/device',
      '/device_authorization',
      '/account',
      '/account/agents/end',
      '/account/consents/withdraw',
      '/account/login-hint-tokens',
      '/account/passkeys',
      '/account/passkeys/remove',
      '/account/password',
      '/account/sessions/end',
      '/account/sessions/end-others',
      // issue 42: CIBA's endpoint and the account page's approval forms
      '/bc-authorize',
      '/account/approvals/approve',
      '/account/approvals/deny',
      '/portal',
      '/portal/signin',
      '/portal/callback',
      '/portal/signout',
      '/portal/signed-out',
      '/portal/apps',
      '/portal/apps/{id}',
      '/portal/apps/{id}/security',
      '/portal/apps/{id}/agents',
      '/portal/apps/{id}/team',
      '/portal/apps/{id}/danger-zone',
      '/portal/apps/{id}/addresses',
      '/portal/apps/{id}/addresses/challenge',
      '/portal/apps/{id}/addresses/remove',
      '/portal/apps/{id}/payment-policy',
      '/portal/apps/{id}/settings',
      '/portal/apps/{id}/rotate-secret',
      '/portal/apps/{id}/disable',
      '/portal/apps/{id}/enable',
      '/portal/apps/{id}/members',
      '/portal/apps/{id}/members/remove',
      '/portal/apps/{id}/keys',
      '/portal/apps/{id}/keys/revoke',
      '/portal/apps/{id}/insight',
      '/portal/apps/{id}/webhooks',
      '/portal/apps/{id}/webhooks/{webhook_id}',
      '/portal/apps/{id}/webhooks/{webhook_id}/settings',
      '/portal/apps/{id}/webhooks/{webhook_id}/rotate-secret',
      '/portal/apps/{id}/webhooks/{webhook_id}/enable',
      '/portal/apps/{id}/webhooks/{webhook_id}/disable',
      '/portal/apps/{id}/webhooks/{webhook_id}/test',
      '/portal/apps/{id}/webhooks/{webhook_id}/recover',
      '/portal/apps/{id}/webhooks/{webhook_id}/redeliver',
      '/portal/apps/{id}/webhooks/{webhook_id}/remove',
      '/portal/apps/{id}/payments',
      '/portal/apps/{id}/payments/requests/{request_id}',
      '/portal/apps/{id}/payments/transactions/{transaction_id}',
      '/portal/apps/{id}/events',
      ...COMMON_PUBLIC_PATHS,
    ]);
    expect(doc.components.securitySchemes).toHaveProperty('clientBasic');
    expect(Object.keys(doc.paths['/token'].post.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '405',
      '413',
      '415',
      '429',
      '500',
      '503',
    ]);
    expect(doc.paths['/token'].post.responses['429'].headers).toHaveProperty('Retry-After');
  }));

it('identity serves its admin API as an OpenAPI document on the admin port, every /admin route in it', () =>
  withHarness(identityHarness, async (h) => {
    // the document is readable without the admin token
    const doc = await checkedDocument(h.adminApp, [
      '/admin/apps',
      '/admin/apps/{id}',
      '/admin/apps/{id}/rotate-secret',
      '/admin/apps/{id}/disable',
      '/admin/apps/{id}/enable',
      '/admin/apps/{id}/members',
      '/admin/apps/{id}/members/{userId}',
      '/admin/resources',
      '/admin/resources/{id}',
      '/admin/resources/{id}/rotate-secret',
      '/admin/users',
      '/admin/users/{id}',
      '/admin/users/{id}/disable',
      '/admin/users/{id}/enable',
      '/admin/users/{id}/reset-password',
      '/admin/users/{id}/consents/{appId}',
      '/admin/users/{id}/sessions',
      '/admin/users/{id}/sessions/{sessionId}',
      '/admin/keys',
      '/admin/keys/rotate',
      '/admin/registration-tokens',
      '/admin/registration-tokens/{id}/revoke',
      ...COMMON_ADMIN_PATHS,
    ]);
    expect(doc.info.title).toBe('Attest identity admin API');
    expect(doc.components.securitySchemes.adminToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    const create = doc.paths['/admin/apps'].post;
    expect(create.security).toEqual([{ adminToken: [] }]);
    // the joi object the route validates with, converted
    const body = create.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['name', 'redirect_uris']);
    expect(body.properties.token_endpoint_auth_method).toMatchObject({
      enum: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
      default: 'client_secret_basic',
    });
    expect(Object.keys(create.responses).sort()).toEqual(['201', '400', '401', '405', '413', '415', '500', '503']);
    expect(create.responses['401'].headers).toHaveProperty('WWW-Authenticate');
    expect(create.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/NewApp',
    });
    const rotate = doc.paths['/admin/apps/{id}/rotate-secret'].post;
    // a POST that needs no body still reads one sent as JSON: invalid_body, 413, 415
    expect(Object.keys(rotate.responses).sort()).toEqual([
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
    const bad = await request(h.adminApp)
      .post('/admin/keys/rotate')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .type('json')
      .send('{"oops"');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_body' });
    expect(Object.keys(doc.paths['/admin/keys'].get.responses).sort()).toEqual(['200', '401', '405', '500', '503']);
    const list = doc.paths['/admin/users'].get;
    expect(list.parameters.map((p: { name: string; in: string }) => `${p.in} ${p.name}`)).toEqual([
      'query limit',
      'query cursor',
      'query username',
    ]);
    // health, metrics and the document itself need no token
    for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json'])
      expect({ path, security: doc.paths[path].get.security }).toEqual({ path, security: undefined });
    // an admin answer is held to the document too: the token works, the body matches App
    await request(h.adminApp).get('/admin/apps').set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
  }));
