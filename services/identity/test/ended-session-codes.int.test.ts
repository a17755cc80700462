import request from 'supertest';
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

/*
 * Trust review (issue 23), second look at item 7: a code issued in a session that then ends (an
 * operator's password reset, the account page, sign-out) used to be exchanged for fresh tokens: the
 * access token was inactive, but the id_token signed the person in to the app anyway. A code of an
 * ended session is now invalid_grant, like a code of a disabled user.
 */
describe('a code of an ended session is not exchanged', () => {
  let h: IdentityHarness;
  let app: { app_id: string; client_secret: string };
  beforeAll(async () => {
    h = await identityHarness();
    app = await createApp(h);
  });
  afterAll(() => h.close());

  const exchange = (code: string) =>
    request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
  const codeFor = async (user: { username: string; password: string }) =>
    callbackParams(
      await browserFlow(
        request.agent(h.publicApp),
        { response_type: 'code', scope: 'openid', client_id: app.app_id, redirect_uri: REDIRECT_URI },
        user,
      ),
    ).code;

  it('after an operator reset the password (every session ended): invalid_grant, no tokens', async () => {
    const user = await createUser(h);
    const code = await codeFor(user);
    await request(h.adminApp)
      .post(`/admin/users/${user.user_id}/reset-password`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({})
      .expect(200);
    const res = await exchange(code);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_grant', error: 'invalid_grant' });
    expect(res.body.id_token).toBeUndefined();
  });

  it('a code of a live session is still exchanged', async () => {
    const res = await exchange(await codeFor(await createUser(h)));
    expect(res.status).toBe(200);
    expect(res.body.id_token).toEqual(expect.any(String));
  });
});
