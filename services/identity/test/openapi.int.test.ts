import { expectDocumentMatchesRoutes } from '@attest/testing';
import { identityHarness } from './support';

it('identity serves an OpenAPI document whose paths are its routes', async () => {
  const h = await identityHarness();
  try {
    await expectDocumentMatchesRoutes(h.publicApp, [
      '/.well-known/openid-configuration',
      '/jwks',
      '/authorize',
      '/token',
      '/introspect',
      '/userinfo',
      '/revoke',
      '/logout',
      '/logout/confirm',
    ]);
  } finally {
    await h.close();
  }
});
