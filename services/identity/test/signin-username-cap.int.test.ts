import request from 'supertest';
import { RedisCache } from '@attest/common';
import { hidden, identityHarness, type IdentityHarness } from './support';

/*
 * Trust review (issue 23), second look: the sign-in form's username had no length cap, and failed
 * sign-ins are counted per (username, address), so each guess with a new 100 KB "username" parked a
 * 100 KB key in the failure store (Redis) for the window. No account has a username over 200
 * characters (the longest an operator can create), so a longer one is refused before anything is
 * counted or stored.
 */
describe('sign-in usernames are capped before they are counted', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    h = await identityHarness({ TRUST_PROXY: 'true' });
  });
  afterAll(() => h.close());

  async function signIn(username: string) {
    const agent = request.agent(h.publicApp);
    const page = await agent.get('/signin?next=account').set('X-Forwarded-For', '203.0.113.61');
    return agent
      .post('/signin')
      .set('X-Forwarded-For', '203.0.113.61')
      .type('form')
      .send({ next: 'account', csrf: hidden(page.text, 'csrf'), username, password: 'wrong-password-1' });
  }

  it('a username over 200 characters: 400 naming the rule, nothing counted', async () => {
    const res = await signIn(`u${'x'.repeat(50_000)}`);
    expect(res.status).toBe(400);
    expect(res.text).toContain('A username has at most 200 characters.');
    expect(res.headers.ratelimit).toBeUndefined();
    const cache = h.ctx.kernel.cache;
    if (cache instanceof RedisCache) {
      const prefix = cache.redis.options.keyPrefix ?? '';
      const keys = await cache.redis.keys(`${prefix}failures:signin:*`);
      expect(keys.filter((k) => k.length > 300)).toEqual([]);
    }
    // 200 characters is still a username (unknown here): counted as usual
    const counted = await signIn('y'.repeat(200));
    expect(counted.status).toBe(400);
    expect(counted.text).toContain('Unknown username or wrong password.');
    expect(counted.headers.ratelimit).toMatch(/^"per-user-and-address";r=9;/);
  });
});
