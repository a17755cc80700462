import request from 'supertest';
import { testLogger } from '@attest/testing';
import { demoOwner, type DemoOwner } from '../apps/demo/src/demo-owner';
import { loadDemoConfig } from '../apps/demo/src/config';
import { ADMIN_TOKEN, createApp, identityHarness, type IdentityHarness } from '../services/identity/test/support';

/**
 * pnpm start's demo app owner (issue 27): the user an operator creates with the username
 * DEMO_OWNER_USERNAME (alice) becomes the owner of the demo app, audited under that operator; nobody else,
 * and never on a team someone has set up already.
 */
describe('the demo app’s owner (pnpm start)', () => {
  let h: IdentityHarness;
  /** The pnpm start of each test: its own DEMO_OWNER_USERNAME and demo app. */
  let owner: DemoOwner;
  const admin = (method: 'get' | 'post' | 'put', route: string) =>
    request(h.adminApp)[method](`/admin${route}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
  const createUser = (username: string) =>
    admin('post', '/users').send({ username, password: 'correct horse battery', verification_level: 'orb' });
  const members = async (appId: string) =>
    ((await admin('get', `/apps/${appId}/members`)).body as { username: string; role: string }[]).map((m) => [
      m.username,
      m.role,
    ]);
  const demoApp = () => createApp(h, ['http://localhost:4003/callback'], 'Attest demo');

  beforeAll(async () => {
    h = await identityHarness(
      {},
      {},
      { onOperatorCreatedUser: (created, teams) => owner.onOperatorCreatedUser(created, teams) },
    );
  });
  afterAll(() => h.close());

  it('is alice unless DEMO_OWNER_USERNAME names another', () => {
    expect(loadDemoConfig({}).DEMO_OWNER_USERNAME).toBe('alice');
    expect(loadDemoConfig({ DEMO_OWNER_USERNAME: 'bob' }).DEMO_OWNER_USERNAME).toBe('bob');
  });

  it('makes alice, created by an operator, the demo app’s owner before the answer; audited under the operator', async () => {
    owner = demoOwner(loadDemoConfig({}).DEMO_OWNER_USERNAME, testLogger);
    const demo = await demoApp();
    const shop = await createApp(h, ['http://localhost:3000/callback'], 'My shop');
    await owner.demoStarted(demo.app_id);
    expect((await createUser('bob')).status).toBe(201);
    expect(await members(demo.app_id)).toEqual([]);

    const alice = await createUser('alice');
    expect(alice.status).toBe(201);
    expect(await members(demo.app_id)).toEqual([['alice', 'owner']]);
    expect(await members(shop.app_id)).toEqual([]);
    const [event] = await h.ctx.kernel.audit.list({ types: ['app.member_added'], limit: 5 });
    expect(event).toMatchObject({ actorType: 'operator', actor: 'admin', subject: demo.app_id });
    expect(event.detail).toMatchObject({
      user_id: alice.body.user_id,
      username: 'alice',
      role: 'owner',
      via: 'pnpm start',
      setting: 'DEMO_OWNER_USERNAME',
    });
  });

  it('leaves a team someone has set up alone', async () => {
    owner = demoOwner('carol', testLogger);
    const demo = await demoApp();
    await owner.demoStarted(demo.app_id);
    expect((await createUser('dave')).status).toBe(201);
    expect((await admin('put', `/apps/${demo.app_id}/members`).send({ username: 'dave', role: 'owner' })).status).toBe(
      201,
    );
    expect((await createUser('carol')).status).toBe(201);
    expect(await members(demo.app_id)).toEqual([['dave', 'owner']]);
  });

  it('gives a user created before the demo app was registered the app once it is', async () => {
    owner = demoOwner('erin', testLogger);
    const erin = await createUser('erin');
    expect(erin.status).toBe(201);
    const demo = await demoApp();
    expect(await members(demo.app_id)).toEqual([]);
    await owner.demoStarted(demo.app_id);
    expect(await h.ctx.kernel.teams.roleOf(demo.app_id, erin.body.user_id)).toBe('owner');
  });
});
