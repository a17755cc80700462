import request from 'supertest';
import {
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

describe('what /authorize parks is bounded (issue 23, item 5)', () => {
  let h: IdentityHarness;
  let app: { app_id: string };
  beforeAll(async () => {
    h = await identityHarness({ INTERACTIONS_PER_ADDRESS: '3', TRUST_PROXY: 'true' });
    app = await createApp(h);
  });
  afterAll(() => h.close());

  const query = (extra: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: app.app_id,
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    ...extra,
  });
  let address = 0;
  /** A fresh client address (TRUST_PROXY=true reads X-Forwarded-For), so each test counts from zero. */
  const fromNewAddress = () => `198.51.100.${++address}`;

  it.each([
    ['state', 2048],
    ['nonce', 512],
    ['login_hint', 256],
  ])('refuses a %s longer than %i characters with invalid_request naming it, and parks nothing', async (name, max) => {
    const from = fromNewAddress();
    const ok = await request(h.publicApp)
      .get('/authorize')
      .set('X-Forwarded-For', from)
      .query(query({ [name]: 'a'.repeat(max) }));
    expect(ok.status).toBe(302);
    expect(ok.headers.location).toMatch(/^\/signin\?interaction=/);

    const res = await request(h.publicApp)
      .get('/authorize')
      .set('X-Forwarded-For', from)
      .query(query({ [name]: 'a'.repeat(max + 1), ...(name === 'state' ? {} : { state: 'kept' }) }));
    expect(res.status).toBe(302);
    const params = callbackParams(res);
    expect(params).toMatchObject({
      error: 'invalid_request',
      error_description: `${name} must be at most ${max} characters.`,
    });
    // an over-long state is the error itself: it is not sent back
    expect(params.state).toBe(name === 'state' ? undefined : 'kept');
  });

  it('a 90 KiB state (POST /authorize: a URL that long never reaches the service) is refused', async () => {
    const res = await request(h.publicApp)
      .post('/authorize')
      .set('X-Forwarded-For', fromNewAddress())
      .type('form')
      .send(query({ state: 'x'.repeat(90 * 1024) }));
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(
      `${REDIRECT_URI}?error=invalid_request&error_description=state+must+be+at+most+2048+characters.&iss=http%3A%2F%2Flocalhost%3A4000`,
    );
  });

  it('limits new interactions per address: 429 with Retry-After and the RateLimit fields; other addresses go on', async () => {
    const from = fromNewAddress();
    for (let i = 0; i < 3; i++) {
      const res = await request(h.publicApp).get('/authorize').set('X-Forwarded-For', from).query(query());
      expect(res.headers.location).toMatch(/^\/signin\?interaction=/);
    }
    const refused = await request(h.publicApp)
      .get('/authorize')
      .set('X-Forwarded-For', from)
      .set('Accept', 'application/json')
      .query(query());
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'too_many_requests' });
    expect(refused.body.detail).toMatch(
      /^Too many sign-ins were started from this address; try again in \d+ seconds\.$/,
    );
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['ratelimit-policy']).toBe('"interactions-per-address";q=3;w=900');
    expect(refused.headers['ratelimit']).toMatch(/^"interactions-per-address";r=0;t=\d+$/);
    const page = await request(h.publicApp).get('/authorize').set('X-Forwarded-For', from).query(query());
    expect(page.status).toBe(429);
    expect(page.text).toContain('too_many_requests');

    const elsewhere = await request(h.publicApp)
      .get('/authorize')
      .set('X-Forwarded-For', fromNewAddress())
      .query(query());
    expect(elsewhere.headers.location).toMatch(/^\/signin\?interaction=/);
  });

  it('holds under concurrency: of 12 parallel new sign-ins from one address, exactly 3 are parked', async () => {
    const from = fromNewAddress();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        request(h.publicApp).get('/authorize').set('X-Forwarded-For', from).query(query()),
      ),
    );
    expect(answers.filter((r) => r.status === 302).length).toBe(3);
    expect(answers.filter((r) => r.status === 429).length).toBe(9);
  });

  it('a silent sign-in parks nothing and is never counted', async () => {
    const user = await createUser(h);
    const from = fromNewAddress();
    const agent = request.agent(h.publicApp);
    const first = await browserFlow(agent, query(), user);
    expect(callbackParams(first).code).toBeTruthy();
    for (let i = 0; i < 6; i++) {
      const res = await agent.get('/authorize').set('X-Forwarded-For', from).query(query());
      expect(callbackParams(res).code).toBeTruthy();
    }
  });
});

describe('INTERACTIONS_PER_ADDRESS by default (issue 40, item 9)', () => {
  let h: IdentityHarness;
  let app: { app_id: string };
  beforeAll(async () => {
    h = await identityHarness({ TRUST_PROXY: 'true' });
    app = await createApp(h);
  });
  afterAll(() => h.close());

  it('lets one shared address (an office, a campus, a carrier NAT) start 1,000 sign-ins in a window', async () => {
    const from = '203.0.113.7';
    const statuses = new Map<number, number>();
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          request(h.publicApp).get('/authorize').set('X-Forwarded-For', from).query({
            response_type: 'code',
            client_id: app.app_id,
            redirect_uri: REDIRECT_URI,
            scope: 'openid',
          }),
        ),
      );
      for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    }
    // 300 was the default: the 301st was refused with 429
    expect(Object.fromEntries(statuses)).toEqual({ 302: 1000 });
    expect(h.config.INTERACTIONS_PER_ADDRESS).toBe(3000);
  });
});
