import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { loadIdentityConfig } from '../src/config';
import { createUser, hidden, identityHarness, type IdentityHarness } from './support';

/**
 * Issue 23 (trust review), item 6: changing how an account signs in needs a recent authentication, and
 * "never remove the last credential" holds when removals race (real parallel requests; run on both
 * backends: embedded, and TEST_DATABASE_URL).
 */
type Agent = ReturnType<typeof request.agent>;

const newPasskey = (userId: string, name: string) => ({
  id: randomBytes(16).toString('base64url'),
  userId,
  publicKey: new Uint8Array(randomBytes(77)),
  counter: 0,
  transports: ['internal'],
  name,
});

/** A credential-shaped answer for a credential we never issued (refused by verification, after any gate). */
const fakeCredential = JSON.stringify({
  id: 'AAAAAAAAAAAAAAAAAAAAAA',
  rawId: 'AAAAAAAAAAAAAAAAAAAAAA',
  type: 'public-key',
  response: { clientDataJSON: 'e30', attestationObject: 'AAAA' },
  clientExtensionResults: {},
});

describe('account page: credential changes need a recent sign-in; the last credential stays', () => {
  let h: IdentityHarness;
  let offsetMs = 0;

  beforeAll(async () => {
    h = await identityHarness({}, {}, { now: () => Date.now() + offsetMs });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    offsetMs = 0;
  });

  async function signInOnAccountPage(agent: Agent, user: { username: string; password: string }) {
    const signin = await agent.get('/signin?next=account');
    const posted = await agent
      .post('/signin')
      .type('form')
      .send({ next: 'account', csrf: hidden(signin.text, 'csrf'), username: user.username, password: user.password });
    expect(posted.headers.location).toBe('/account');
    return agent.get('/account');
  }

  /** A passkey-only account (as self sign-up makes it) with `count` passkeys, and a browser signed in to it now. */
  async function passkeyOnlyAccount(count: number) {
    const userId = randomBytes(16).toString('hex');
    const first = newPasskey(userId, 'first');
    const failure = await h.ctx.signin.createPasskeyAccount(
      { userId, username: `pk-${randomBytes(4).toString('hex')}`, name: null },
      first,
    );
    expect(failure).toBeNull();
    const ids = [first.id];
    for (let i = 1; i < count; i++) {
      const more = newPasskey(userId, `more ${i}`);
      expect(await h.ctx.signin.passkeys.insert(more)).toBe(true);
      ids.push(more.id);
    }
    const { cookie } = await h.ctx.tokens.sessions.create({
      userId,
      authTime: Math.floor((Date.now() + offsetMs) / 1000),
      amr: ['hwk'],
    });
    const page = await request(h.publicApp).get('/account').set('Cookie', `attest_session=${cookie}`);
    expect(page.status).toBe(200);
    const csrfCookie = /attest_csrf=([0-9a-f]{64})/.exec(String(page.headers['set-cookie']))![1];
    return {
      userId,
      ids,
      cookies: `attest_session=${cookie}; attest_csrf=${csrfCookie}`,
      csrf: hidden(page.text, 'csrf'),
    };
  }

  it('a sign-in older than 5 minutes: adding or removing a passkey is refused until the user signs in again', async () => {
    const user = await createUser(h);
    const agent = request.agent(h.publicApp);
    const fresh = await signInOnAccountPage(agent, user);
    expect(fresh.text).not.toContain('id="passkeys-reauth"');
    const passkey = newPasskey(user.user_id, 'my phone');
    expect(await h.ctx.signin.passkeys.insert(passkey)).toBe(true);

    offsetMs = 6 * 60 * 1000; // the session is still live (idle timeout 8 h), its sign-in no longer recent
    const stale = await agent.get('/account');
    expect(stale.status).toBe(200);
    expect(stale.text).toContain('id="passkeys-reauth"');
    expect(stale.text).toContain('<a href="/signin?next=account">sign in again</a>');
    const csrf = hidden(stale.text, 'csrf');
    const remove = await agent.post('/account/passkeys/remove').type('form').send({ csrf, passkey_id: passkey.id });
    expect(remove.status).toBe(403);
    expect(remove.text).toContain('sign in again before changing your passkeys');
    const add = await agent
      .post('/account/passkeys')
      .type('form')
      .send({ csrf, ceremony: 'a'.repeat(64), credential: fakeCredential, name: 'attacker key' });
    expect(add.status).toBe(403);
    expect(add.text).toContain('sign in again before changing your passkeys');
    expect((await h.ctx.signin.passkeys.listForUser(user.user_id)).map((p) => p.id)).toEqual([passkey.id]);

    // a fresh password check (signing in again) opens the door for 5 minutes
    const again = await signInOnAccountPage(agent, user);
    expect(again.text).not.toContain('id="passkeys-reauth"');
    const csrf2 = hidden(again.text, 'csrf');
    const addAgain = await agent
      .post('/account/passkeys')
      .type('form')
      .send({ csrf: csrf2, ceremony: 'a'.repeat(64), credential: fakeCredential });
    expect(addAgain.status).toBe(400); // past the gate: the (fake) credential itself is refused
    const removed = await agent
      .post('/account/passkeys/remove')
      .type('form')
      .send({ csrf: csrf2, passkey_id: passkey.id });
    expect(removed.status).toBe(303);
    expect(removed.headers.location).toBe('/account?notice=passkey-removed');
    expect(await h.ctx.signin.passkeys.listForUser(user.user_id)).toEqual([]);
  });

  it('parallel removals of the passkeys of a passkey-only account leave exactly one', async () => {
    for (const count of [2, 3, 2, 3]) {
      const account = await passkeyOnlyAccount(count);
      const results = await Promise.all(
        account.ids.map((id) =>
          request(h.publicApp)
            .post('/account/passkeys/remove')
            .set('Cookie', account.cookies)
            .type('form')
            .send({ csrf: account.csrf, passkey_id: id }),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([...Array<number>(count - 1).fill(303), 409]);
      expect(results.find((r) => r.status === 409)!.text).toContain('This is your only passkey');
      expect(await h.ctx.signin.passkeys.listForUser(account.userId)).toHaveLength(1);
    }
  });

  it('the last passkey of an account without a password cannot be removed; an unknown one is 404', async () => {
    const account = await passkeyOnlyAccount(1);
    const refused = await request(h.publicApp)
      .post('/account/passkeys/remove')
      .set('Cookie', account.cookies)
      .type('form')
      .send({ csrf: account.csrf, passkey_id: account.ids[0] });
    expect(refused.status).toBe(409);
    const unknown = await request(h.publicApp)
      .post('/account/passkeys/remove')
      .set('Cookie', account.cookies)
      .type('form')
      .send({ csrf: account.csrf, passkey_id: 'not-a-passkey-of-yours' });
    expect(unknown.status).toBe(404);
    expect(await h.ctx.signin.passkeys.listForUser(account.userId)).toHaveLength(1);
  });
});

describe('ACCOUNT_REAUTH_SECONDS (issue 40, item 10)', () => {
  let h: IdentityHarness;
  let offsetMs = 0;

  beforeAll(async () => {
    h = await identityHarness({ ACCOUNT_REAUTH_SECONDS: '90' }, {}, { now: () => Date.now() + offsetMs });
  });
  afterAll(() => h.close());

  it('sets how recent a sign-in must be to change passkeys, and the page says it', async () => {
    const user = await createUser(h);
    const agent = request.agent(h.publicApp);
    const signin = await agent.get('/signin?next=account');
    await agent
      .post('/signin')
      .type('form')
      .send({ next: 'account', csrf: hidden(signin.text, 'csrf'), username: user.username, password: user.password });
    const passkey = newPasskey(user.user_id, 'my phone');
    expect(await h.ctx.signin.passkeys.insert(passkey)).toBe(true);

    offsetMs = 80 * 1000; // within 90 s: no need to sign in again
    const recent = await agent.get('/account');
    expect(recent.text).not.toContain('id="passkeys-reauth"');

    offsetMs = 100 * 1000; // past 90 s, well within the 5 minutes of the default
    const stale = await agent.get('/account');
    expect(stale.text).toContain('id="passkeys-reauth"');
    expect(stale.text).toContain('a sign-in of the last 90 seconds is needed');
    const remove = await agent
      .post('/account/passkeys/remove')
      .type('form')
      .send({ csrf: hidden(stale.text, 'csrf'), passkey_id: passkey.id });
    expect(remove.status).toBe(403);
    expect(remove.text).toContain('your last sign-in was more than 90 seconds ago');
    expect((await h.ctx.signin.passkeys.listForUser(user.user_id)).map((p) => p.id)).toEqual([passkey.id]);
  });

  it('is refused at start outside 30 to 86400 seconds, naming the variable', () => {
    for (const value of ['10', '86401', 'soon']) {
      expect(() => loadIdentityConfig({ ...process.env, ACCOUNT_REAUTH_SECONDS: value })).toThrow(
        /ACCOUNT_REAUTH_SECONDS/,
      );
    }
    expect(loadIdentityConfig({ ...process.env, ACCOUNT_REAUTH_SECONDS: '600' }).ACCOUNT_REAUTH_SECONDS).toBe(600);
  });
});
