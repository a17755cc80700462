import request from 'supertest';
import { MemoryCache, RedisCache } from '@attest/common';
import { createApp, createUser, hidden, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';
import { softAuthenticator } from './soft-authenticator';

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
    const cache = h.ctx.kernel.cache;
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

  const rp = { id: 'localhost', origin: 'http://localhost:4000' };
  const optionsOf = (page: string) =>
    JSON.parse(/data-options="([^"]+)"/.exec(page)![1].replace(/&quot;/g, '"')) as { challenge: string };
  const ceremonyOf = (page: string) => /name="ceremony" value="([0-9a-f]{64})"/.exec(page)![1];

  it('the account page reloaded adds no cache entry; a passkey added from it then signs in, each ceremony once', async () => {
    const user = await createUser(h);
    const agent = request.agent(h.publicApp);
    const signin = await agent.get('/signin?next=account');
    await agent
      .post('/signin')
      .type('form')
      .send({ next: 'account', csrf: hidden(signin.text, 'csrf'), username: user.username, password: user.password });
    const before = await size();
    let account = '';
    for (let i = 0; i < 10; i++) {
      const page = await agent.get('/account');
      expect(page.status).toBe(200);
      account = page.text;
    }
    expect((await size()) - before).toBe(0);

    const device = softAuthenticator(rp);
    const add = {
      csrf: hidden(account, 'csrf'),
      ceremony: ceremonyOf(account),
      name: 'Laptop',
      credential: JSON.stringify(device.register(optionsOf(account).challenge)),
    };
    const added = await agent.post('/account/passkeys').type('form').send(add);
    expect(added.headers.location).toBe('/account?notice=passkey-added');
    // the same ceremony again: already used
    const again = await agent.post('/account/passkeys').type('form').send(add);
    expect(again.status).toBe(400);
    expect(again.text).toContain('That passkey request has expired or was already used.');

    // signing in with it from another browser, through the page's derived challenge
    const other = request.agent(h.publicApp);
    const page = await other.get('/signin?next=account');
    const form = {
      next: 'account',
      csrf: hidden(page.text, 'csrf'),
      method: 'passkey',
      ceremony: ceremonyOf(page.text),
      credential: JSON.stringify(device.assert(optionsOf(page.text).challenge, true, user.user_id)),
    };
    const signedIn = await other.post('/signin').type('form').send(form);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers['set-cookie']?.toString()).toContain('attest_session=');
    const replay = await other.post('/signin').type('form').send(form);
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('That passkey request has expired or was already used.');
  });
});
