import request from 'supertest';
import { expectDocumentMatchesRoutes, undocumentedRoutes } from '@attest/testing';
import { identityHarness } from './support';

it('identity serves an OpenAPI document whose paths are its routes', async () => {
  const h = await identityHarness();
  try {
    await expectDocumentMatchesRoutes(h.publicApp, [
      '/.well-known/openid-configuration',
      '/jwks',
      '/jwks.json',
      '/authorize',
      '/token',
      '/introspect',
      '/userinfo',
      '/revoke',
      '/logout',
      '/logout/confirm',
      '/signin',
      '/signup',
      '/consent',
      '/account',
      '/account/consents/withdraw',
      '/account/passkeys',
      '/account/passkeys/remove',
      '/account/password',
      '/account/sessions/end',
      '/account/sessions/end-others',
      '/healthz',
      '/readyz',
      '/openapi.json',
      '/docs',
    ]);
    expect(undocumentedRoutes(h.publicApp)).toEqual([]);
    const doc = (await request(h.publicApp).get('/openapi.json')).body;
    expect(doc.components.securitySchemes).toHaveProperty('clientBasic');
    expect(Object.keys(doc.paths['/token'].post.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '413',
      '415',
      '429',
      '500',
      '503',
    ]);
    expect(doc.paths['/token'].post.responses['429'].headers).toHaveProperty('Retry-After');
  } finally {
    await h.close();
  }
});
