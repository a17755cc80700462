import { randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { createBus, RedisCache } from '@attest/common';
import { testLogger } from '@attest/testing';
import {
  ADMIN_TOKEN,
  basic,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

const redisUrl = process.env.TEST_REDIS_URL;

/** Polls check() until it returns true, for at most a second; returns its last answer. Never sleep-then-assume. */
async function withinASecond(check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + 1000;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Two instances of the identity app over one Postgres schema and one Redis (same key prefix and bus),
 * as two replicas: a change made through one is seen by the other within a second.
 */
(redisUrl ? describe : describe.skip)('two replicas sharing Postgres and Redis', () => {
  let one: IdentityHarness;
  let two: IdentityHarness;
  let app: { app_id: string; client_secret: string };

  beforeAll(async () => {
    const prefix = `test:identity:${randomBytes(5).toString('hex')}:`;
    const shared = () => ({
      cache: new RedisCache(redisUrl!, prefix, testLogger),
      bus: createBus(redisUrl, prefix, testLogger),
    });
    one = await identityHarness({}, shared());
    two = await identityHarness({}, { ...shared(), db: one.storage.db });
    for (let i = 0; i < 100 && !(one.storage.bus.connected && two.storage.bus.connected); i++)
      await new Promise((r) => setTimeout(r, 20));
    app = await createApp(one);
  });
  afterAll(async () => {
    await two.close();
    await one.close();
  });

  const admin = (h: IdentityHarness, method: 'post' | 'patch' | 'delete', path: string) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
  const userinfo = (h: IdentityHarness, token: string) =>
    request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${token}`);
  const introspect = (h: IdentityHarness, a: { app_id: string; client_secret: string }, token: string) =>
    request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(a.app_id, a.client_secret))
      .type('form')
      .send({ token });
  const exchange = (h: IdentityHarness, a: { app_id: string; client_secret: string }, code: string) =>
    request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(a.app_id, a.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });

  /** Signs in on `h` and exchanges the code there. */
  async function signIn(
    h: IdentityHarness,
    a: { app_id: string; client_secret: string },
    u: { username: string; password: string },
  ) {
    const res = await browserFlow(
      request.agent(h.publicApp),
      { response_type: 'code', scope: 'openid profile', client_id: a.app_id, redirect_uri: REDIRECT_URI },
      u,
    );
    const code = callbackParams(res).code;
    const tokens = await exchange(h, a, code);
    expect(tokens.status).toBe(200);
    return { code, access: tokens.body.access_token as string };
  }

  it('an app disabled on one replica stops working on the other', async () => {
    const a = await createApp(one);
    const u = await createUser(one);
    const { access } = await signIn(two, a, u);
    expect((await userinfo(two, access)).status).toBe(200);
    await admin(one, 'post', `/admin/apps/${a.app_id}/disable`).expect(200);
    expect(await withinASecond(async () => (await userinfo(two, access)).status === 401)).toBe(true);
    expect((await introspect(two, a, access)).status).toBe(401);
  });

  it('a secret rotated on one replica is refused by the other', async () => {
    const a = await createApp(one);
    const u = await createUser(one);
    const { access } = await signIn(two, a, u);
    expect((await introspect(two, a, access)).body.active).toBe(true);
    await admin(one, 'post', `/admin/apps/${a.app_id}/rotate-secret`).expect(200);
    expect(await withinASecond(async () => (await introspect(two, a, access)).status === 401)).toBe(true);
  });

  it('a user changed on one replica is served changed by the other', async () => {
    const u = await createUser(one);
    const { access } = await signIn(two, app, u);
    expect((await userinfo(two, access)).body.name).toBe('Ada Lovelace');
    await admin(one, 'patch', `/admin/users/${u.user_id}`).send({ name: 'Ada King' }).expect(200);
    expect(await withinASecond(async () => (await userinfo(two, access)).body.name === 'Ada King')).toBe(true);
  });

  it('a consent withdrawn on one replica stops the tokens on the other', async () => {
    const u = await createUser(one);
    const { access } = await signIn(two, app, u);
    expect((await userinfo(two, access)).status).toBe(200);
    await admin(one, 'delete', `/admin/users/${u.user_id}/consents/${app.app_id}`).expect(204);
    expect(await withinASecond(async () => (await userinfo(two, access)).status === 401)).toBe(true);
    expect((await introspect(two, app, access)).body).toEqual({ active: false });
  });

  it('a user disabled on one replica: the other refuses their tokens and their sign-in', async () => {
    const u = await createUser(one);
    const { access } = await signIn(two, app, u);
    expect((await userinfo(two, access)).status).toBe(200);
    await admin(one, 'post', `/admin/users/${u.user_id}/disable`).expect(200);
    expect(await withinASecond(async () => (await userinfo(two, access)).status === 401)).toBe(true);
    expect((await introspect(two, app, access)).body).toEqual({ active: false });
    // disabling ended the user's sessions: the tokens issued in them stay inactive once enabled again
    await admin(one, 'post', `/admin/users/${u.user_id}/enable`).expect(200);
    expect(await withinASecond(async () => (await userinfo(two, access)).status === 200)).toBe(false);
    expect((await introspect(two, app, access)).body).toEqual({ active: false });
  });

  it('a user deleted on one replica: the other refuses their tokens', async () => {
    const u = await createUser(one);
    const { access } = await signIn(two, app, u);
    expect((await introspect(two, app, access)).body.active).toBe(true);
    await admin(one, 'delete', `/admin/users/${u.user_id}`).expect(204);
    expect(await withinASecond(async () => (await userinfo(two, access)).status === 401)).toBe(true);
    expect((await introspect(two, app, access)).body).toEqual({ active: false });
  });

  it('a token revoked on one replica (code replayed there) is refused by the other', async () => {
    const u = await createUser(one);
    const { code, access } = await signIn(two, app, u);
    expect((await introspect(two, app, access)).body.active).toBe(true);
    expect((await exchange(one, app, code)).body.code).toBe('invalid_grant');
    expect(await withinASecond(async () => (await introspect(two, app, access)).body.active === false)).toBe(true);
    expect((await userinfo(two, access)).status).toBe(401);
  });

  it('a CIBA request polled as pending on one replica: approved on the other, the next poll here redeems it', async () => {
    const agent = (
      await admin(one, 'post', '/admin/apps')
        .send({ name: 'Replica agent', redirect_uris: [REDIRECT_URI], backchannel_token_delivery_mode: 'poll' })
        .expect(201)
    ).body as { app_id: string; client_secret: string };
    const u = await createUser(one);
    const asked = await request(one.publicApp)
      .post('/bc-authorize')
      .type('form')
      .set('Authorization', basic(agent.app_id, agent.client_secret))
      .send({ scope: 'openid', login_hint: await one.ctx.oauth.grants.subjectFor(agent.app_id, u.user_id) })
      .expect(200);
    const poll = () =>
      request(one.publicApp)
        .post('/token')
        .type('form')
        .set('Authorization', basic(agent.app_id, agent.client_secret))
        .send({ grant_type: 'urn:openid:params:grant-type:ciba', auth_req_id: asked.body.auth_req_id as string });
    // read as pending here: this replica now answers its polls from memory
    expect((await poll()).body.error).toBe('authorization_pending');
    expect((await poll()).body.error).toBe('slow_down');
    const [pending] = await two.ctx.ciba.ciba.pendingFor(u.user_id);
    expect(
      await two.ctx.ciba.ciba.decide(pending.id, u.user_id, { status: 'approved', acr: 'urn:attest:loa:orb' }),
    ).not.toBeNull();
    let answer: request.Response | undefined;
    expect(
      await withinASecond(async () => {
        answer = await poll();
        return answer.status === 200;
      }),
    ).toBe(true);
    expect(typeof answer?.body.access_token).toBe('string');
    // once
    expect((await poll()).body.error).toBe('invalid_grant');
  });

  it('a key rotated on one replica is published and signed with by the other', async () => {
    const u = await createUser(one);
    const rotated = await admin(one, 'post', '/admin/keys/rotate').expect(200);
    const kids = async () =>
      ((await request(two.publicApp).get('/jwks')).body.keys as { kid: string }[]).map((k) => k.kid);
    expect(await withinASecond(async () => (await kids()).includes(rotated.body.kid))).toBe(true);
    const { access } = await signIn(two, app, u);
    expect(jwt.decode(access, { complete: true })!.header.kid).toBe(rotated.body.kid);
    expect((await userinfo(one, access)).status).toBe(200);
  });
});
