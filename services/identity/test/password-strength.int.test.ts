import request from 'supertest';
import { hashPassword } from '../src/kernel/crypto';
import { loadIdentityConfig } from '../src/config';
import { ADMIN_TOKEN, createUser, hidden, identityHarness, type IdentityHarness } from './support';

const admin = (h: IdentityHarness, method: 'post' | 'get', path: string) =>
  request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

/** Signs in on the account page with a password; returns the agent and the account page. */
async function accountSignIn(h: IdentityHarness, user: { username: string; password: string }) {
  const agent = request.agent(h.publicApp);
  const page = await agent.get('/signin?next=account');
  const signedIn = await agent
    .post('/signin')
    .type('form')
    .send({ next: 'account', csrf: hidden(page.text, 'csrf'), username: user.username, password: user.password });
  expect(signedIn.headers.location).toBe('/account');
  const account = await agent.get('/account');
  return { agent, csrf: hidden(account.text, 'csrf') };
}

describe('password hashing cost and common passwords (issue 23, item 16)', () => {
  let h: IdentityHarness;
  beforeAll(async () => {
    // a cost above the tests' default of 10, so an older, cheaper hash has something to be upgraded to
    h = await identityHarness({ PASSWORD_HASH_COST: '11' });
  });
  afterAll(() => h.close());

  it('hashes at N=2^17 unless PASSWORD_HASH_COST says otherwise, within maxmem', async () => {
    const config = loadIdentityConfig({ IDENTITY_SECRET: 'x'.repeat(32), LOG_LEVEL: 'silent' });
    expect(config.PASSWORD_HASH_COST).toBe(17);
    expect(await hashPassword('a long passphrase here')).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(() => loadIdentityConfig({ PASSWORD_HASH_COST: '8' })).toThrow(/PASSWORD_HASH_COST/);
    const user = await createUser(h);
    expect((await h.ctx.kernel.users.findByUsername(user.username))!.passwordHash).toMatch(/^scrypt\$2048\$8\$1\$/);
  });

  it('rehashes a cheaper stored hash at the next successful sign-in, and only then', async () => {
    const user = await createUser(h);
    const old = await hashPassword(user.password, 10);
    await h.ctx.kernel.users.setPasswordHash(user.user_id, old);

    const agent = request.agent(h.publicApp);
    const page = await agent.get('/signin?next=account');
    const wrong = await agent
      .post('/signin')
      .type('form')
      .send({
        next: 'account',
        csrf: hidden(page.text, 'csrf'),
        username: user.username,
        password: 'not the password',
      });
    expect(wrong.status).toBe(400);
    expect((await h.ctx.kernel.users.findByUsername(user.username))!.passwordHash).toBe(old);

    await accountSignIn(h, user);
    const upgraded = (await h.ctx.kernel.users.findByUsername(user.username))!.passwordHash!;
    expect(upgraded).toMatch(/^scrypt\$2048\$8\$1\$/);
    // the same password still signs in, against the new hash
    await accountSignIn(h, user);
    expect((await h.ctx.kernel.users.findByUsername(user.username))!.passwordHash).toBe(upgraded);
  });

  it('the upgrade never overwrites a password changed since the check', async () => {
    const user = await createUser(h);
    const stale = await hashPassword(user.password, 10);
    await h.ctx.kernel.users.setPasswordHash(user.user_id, await hashPassword('the newer password', 11));
    expect(
      await h.ctx.kernel.users.replacePasswordHash(user.user_id, stale, await hashPassword(user.password, 11)),
    ).toBe(false);
    const { verifyPassword } = await import('../src/kernel/crypto');
    expect(
      await verifyPassword(
        'the newer password',
        (await h.ctx.kernel.users.findByUsername(user.username))!.passwordHash!,
      ),
    ).toBe(true);
  });

  it('admin create and reset refuse a common password, naming the field', async () => {
    const created = await admin(h, 'post', '/admin/users').send({
      username: `common-${Date.now()}`,
      password: 'password1',
      verification_level: 'device',
    });
    expect(created.status).toBe(400);
    expect(created.body).toMatchObject({ code: 'invalid_parameter', attribute: 'password' });
    expect(created.body.detail).toMatch(/^password is one of the most common passwords/);
    // case does not make a common password uncommon
    const upper = await admin(h, 'post', '/admin/users').send({
      username: `common-${Date.now()}-b`,
      password: 'IloveYou1',
      verification_level: 'device',
    });
    expect(upper.body).toMatchObject({ code: 'invalid_parameter', attribute: 'password' });

    const user = await createUser(h);
    const reset = await admin(h, 'post', `/admin/users/${user.user_id}/reset-password`).send({
      password: 'qwertyuiop',
    });
    expect(reset.status).toBe(400);
    expect(reset.body).toMatchObject({ code: 'invalid_parameter', attribute: 'password' });
    // a generated one is never common; a long uncommon one is taken
    expect((await admin(h, 'post', `/admin/users/${user.user_id}/reset-password`).send({})).status).toBe(200);
    expect(
      (await admin(h, 'post', `/admin/users/${user.user_id}/reset-password`).send({ password: 'plum kettle orbit' }))
        .status,
    ).toBe(200);
  });

  it('the account page refuses a common new password with a sentence naming it, and keeps the old one', async () => {
    const user = await createUser(h);
    const { agent, csrf } = await accountSignIn(h, user);
    const res = await agent.post('/account/password').type('form').send({
      csrf,
      current_password: user.password,
      new_password: 'baseball1',
      confirm_password: 'baseball1',
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('The new password is one of the most common passwords');
    const { verifyPassword } = await import('../src/kernel/crypto');
    expect(
      await verifyPassword(user.password, (await h.ctx.kernel.users.findByUsername(user.username))!.passwordHash!),
    ).toBe(true);
  });
});
