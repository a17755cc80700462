import request from 'supertest';
import { MemoryCache, RedisCache } from '@attest/common';
import { createApp, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';

/*
 * Trust review (issue 23), second look: every render of the sign-in page offers a passkey challenge.
 * It used to be parked in the cache at every render, for PASSKEY_CHALLENGE_TTL_SECONDS and without a
 * limit: anyone could reload /signin?next=account (no interaction, no session needed) until the bounded
 * in-process cache refused everyone's sign-ins (or Redis filled). The sign-in challenge is now derived
 * from a MAC that the page carries, and the cache only remembers that it was used, once it is posted.
 */
describe('sign-in pages park nothing in the cache', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    h = await identityHarness({ TRUST_PROXY: 'true' });
  });
  afterAll(() => h.close());

  /** The entries of this service's cache (Redis: the keys under its prefix). */
  const size = async () => {
    const cache = h.ctx.cache;
    if (cache instanceof RedisCache) return (await cache.redis.keys(`${cache.redis.options.keyPrefix ?? ''}*`)).length;
    return (cache as MemoryCache).size;
  };

  it('reloading the sign-in page from one address adds no cache entry', async () => {
    const before = await size();
    for (let i = 0; i < 30; i++) {
      const page = await request(h.publicApp)
        .get('/signin')
        .query({ next: 'account' })
        .set('X-Forwarded-For', '203.0.113.77');
      expect(page.status).toBe(200);
      expect(page.text).toMatch(/name="ceremony" value="[0-9a-f]{64}"/);
    }
    expect((await size()) - before).toBe(0);
  });

  it("an interaction's sign-in page reloaded adds no cache entry either", async () => {
    const app = await createApp(h);
    const agent = request.agent(h.publicApp);
    const start = await agent
      .get('/authorize')
      .query({ response_type: 'code', scope: 'openid', client_id: app.app_id, redirect_uri: REDIRECT_URI });
    const before = await size();
    for (let i = 0; i < 10; i++) expect((await agent.get(start.headers.location as string)).status).toBe(200);
    expect((await size()) - before).toBe(0);
  });
});
