import request from 'supertest';
import { createApp, createUser, hidden, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';

describe('sign-in attempt limits', () => {
  let h: IdentityHarness;
  let app: { app_id: string };
  let user: { username: string; password: string };
  beforeAll(async () => {
    h = await identityHarness({ TRUST_PROXY: 'true' });
    app = await createApp(h);
    user = await createUser(h);
  });
  afterAll(() => h.close());

  async function attempt(ip: string, password: string) {
    const agent = request.agent(h.publicApp);
    let res = await agent.get('/authorize').set('X-Forwarded-For', ip).query({ response_type: 'code', scope: 'openid', client_id: app.app_id, redirect_uri: REDIRECT_URI });
    res = await agent.get(res.headers.location).set('X-Forwarded-For', ip);
    return agent
      .post('/signin')
      .set('X-Forwarded-For', ip)
      .type('form')
      .send({ interaction: hidden(res.text, 'interaction'), csrf: hidden(res.text, 'csrf'), username: user.username, password });
  }

  it('stops a source after 10 failures for a user, without locking the user out elsewhere', async () => {
    for (let i = 0; i < 10; i++) expect((await attempt('203.0.113.7', 'wrong password')).status).toBe(400);
    const blocked = await attempt('203.0.113.7', user.password);
    expect(blocked.status).toBe(429);
    expect(blocked.text).toContain('Too many failed attempts');
    expect(blocked.headers['set-cookie']?.toString() ?? '').not.toContain('attest_session');
    const elsewhere = await attempt('198.51.100.9', user.password);
    expect(elsewhere.status).toBe(303);
    expect(elsewhere.headers['set-cookie']?.toString()).toContain('attest_session');
  });
});
