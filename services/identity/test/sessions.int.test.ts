import request from 'supertest';
import {
  ADMIN_TOKEN,
  BASE_URL,
  basic,
  browserFlow,
  callbackParams,
  createApp,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

describe('server-side sessions: lifetimes, sid/amr in the id_token, list and end', () => {
  let h: IdentityHarness;
  let app: { app_id: string; client_secret: string };
  let user: { username: string; password: string; user_id: string };
  let offsetMs = 0;
  let decodeJwt: (typeof import('jose'))['decodeJwt'];
  beforeAll(async () => {
    ({ decodeJwt } = await import('jose'));
    h = await identityHarness(
      { SESSION_IDLE_TIMEOUT_SECONDS: '600', SESSION_MAX_AGE_SECONDS: '3600' },
      {},
      { now: () => Date.now() + offsetMs },
    );
    app = await createApp(h);
    user = await createUser(h);
  });
  afterAll(() => h.close());
  beforeEach(() => {
    offsetMs = 0;
  });

  const query = (extra: Record<string, string> = {}) => ({
    response_type: 'code',
    scope: 'openid',
    client_id: app.app_id,
    redirect_uri: REDIRECT_URI,
    state: 's',
    nonce: 'n',
    ...extra,
  });
  const admin = () => request(h.adminApp);
  const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  async function signIn(): Promise<{ agent: ReturnType<typeof request.agent>; code: string }> {
    const agent = request.agent(h.publicApp).set('User-Agent', FIREFOX);
    const res = await browserFlow(agent, query(), user);
    const code = callbackParams(res).code;
    expect(code).toMatch(/^[0-9a-f]{64}$/);
    return { agent, code };
  }
  const silent = async (agent: ReturnType<typeof request.agent>) =>
    callbackParams(await agent.get('/authorize').query(query({ prompt: 'none' })));

  it('puts auth_time, amr and a per-app sid in the id_token, and lists the session with its device and apps', async () => {
    await admin().delete(`/admin/users/${user.user_id}/sessions`).set(auth);
    const before = Math.floor(Date.now() / 1000);
    const { code } = await signIn();
    const token = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(token.status).toBe(200);
    const claims = decodeJwt(token.body.id_token as string);
    expect(claims.amr).toEqual(['pwd']);
    expect(claims.auth_time).toBeGreaterThanOrEqual(before);
    expect(claims.sid).toMatch(/^[0-9a-f]{32}$/);

    const list = await admin().get(`/admin/users/${user.user_id}/sessions`).set(auth);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      {
        session_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        created_at: expect.any(String),
        last_seen_at: expect.any(String),
        expires_at: expect.any(String),
        auth_time: claims.auth_time,
        amr: ['pwd'],
        device: 'Firefox on Linux',
        address: expect.any(String),
        app_ids: [app.app_id],
      },
    ]);
    const created = Date.parse(list.body[0].created_at as string);
    expect(Date.parse(list.body[0].expires_at as string) - created).toBe(3600 * 1000);
    // the sid an app sees is not the session id, and differs per app
    expect(claims.sid).not.toBe(list.body[0].session_id);
    const [row] = await h.storage.db.query<{ cookie_hash: string; client_ids: string[] }>(
      'SELECT cookie_hash, client_ids FROM sessions WHERE id = $1',
      [list.body[0].session_id],
    );
    expect(row.cookie_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.client_ids).toEqual([app.app_id]);
  });

  it('idle timeout: use keeps the session alive; 600 s unused ends it', async () => {
    const { agent } = await signIn();
    offsetMs = 590 * 1000;
    expect((await silent(agent)).code).toMatch(/^[0-9a-f]{64}$/);
    offsetMs = 1180 * 1000;
    expect((await silent(agent)).code).toMatch(/^[0-9a-f]{64}$/);
    offsetMs = 1790 * 1000;
    expect(await silent(agent)).toEqual({
      error: 'login_required',
      error_description: expect.any(String),
      iss: BASE_URL,
      state: 's',
    });
    expect((await admin().get(`/admin/users/${user.user_id}/sessions`).set(auth)).body).toEqual([]);
  });

  it('absolute lifetime: a session in constant use still ends SESSION_MAX_AGE_SECONDS after sign-in', async () => {
    const { agent } = await signIn();
    for (let s = 500; s < 3600; s += 500) {
      offsetMs = s * 1000;
      expect((await silent(agent)).code).toMatch(/^[0-9a-f]{64}$/);
    }
    offsetMs = 3600 * 1000;
    expect((await silent(agent)).error).toBe('login_required');
  });

  it('ends one session or all of them: the next prompt=none is login_required', async () => {
    await admin().delete(`/admin/users/${user.user_id}/sessions`).set(auth);
    const one = await signIn();
    const two = await signIn();
    const list = await admin().get(`/admin/users/${user.user_id}/sessions`).set(auth);
    expect(list.body).toHaveLength(2);
    const ids = (list.body as { session_id: string }[]).map((s) => s.session_id);

    expect((await admin().delete(`/admin/users/${user.user_id}/sessions/${ids[0]}`).set(auth)).status).toBe(204);
    expect((await admin().delete(`/admin/users/${user.user_id}/sessions/${ids[0]}`).set(auth)).status).toBe(404);
    expect((await admin().delete(`/admin/users/usr_other/sessions/${ids[1]}`).set(auth)).status).toBe(404);
    const results = [await silent(one.agent), await silent(two.agent)];
    expect(results.filter((r) => r.error === 'login_required')).toHaveLength(1);
    expect(results.filter((r) => r.code)).toHaveLength(1);

    const all = await admin().delete(`/admin/users/${user.user_id}/sessions`).set(auth);
    expect(all.body).toEqual({ ended: 1 });
    expect((await silent(one.agent)).error).toBe('login_required');
    expect((await silent(two.agent)).error).toBe('login_required');
    expect(await h.storage.db.query('SELECT id FROM sessions WHERE user_id = $1', [user.user_id])).toEqual([]);
  });
});
