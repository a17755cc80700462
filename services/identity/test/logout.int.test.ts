import http from 'node:http';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';
import type { JSONWebKeySet, JWTPayload } from 'jose';
import request from 'supertest';
import {
  ADMIN_TOKEN,
  BASE_URL,
  basic,
  browserFlow,
  callbackParams,
  hidden,
  identityHarness,
  createUser,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

type Agent = ReturnType<typeof request.agent>;
const SIGNED_OUT = 'http://localhost:3000/signed-out';

/** A test app backend: records back-channel logout POSTs and answers each with the next status. */
function receiver() {
  const received: { contentType?: string; body: string }[] = [];
  const statuses: number[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ contentType: req.headers['content-type'], body });
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });
  return { server, received, statuses };
}

async function waitFor(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not reached');
}

describe('RP-Initiated Logout 1.0 and Back-Channel Logout 1.0', () => {
  let h: IdentityHarness;
  let app: { app_id: string; client_secret: string };
  let other: { app_id: string; client_secret: string };
  let user: { username: string; password: string; user_id: string };
  const rx = receiver();
  let offsetMs = 0;
  let jose: typeof import('jose');

  beforeAll(async () => {
    jose = await import('jose');
    await new Promise<void>((r) => rx.server.listen(0, '127.0.0.1', r));
    const port = (rx.server.address() as AddressInfo).port;
    h = await identityHarness({}, {}, { now: () => Date.now() + offsetMs });
    const create = async (body: Record<string, unknown>) => {
      const res = await request(h.adminApp)
        .post('/admin/apps')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .send(body);
      expect(res.status).toBe(201);
      return res.body as {
        app_id: string;
        client_secret: string;
        post_logout_redirect_uris: string[];
        backchannel_logout_uri: string | null;
      };
    };
    const created = await create({
      name: 'Logout app',
      redirect_uris: [REDIRECT_URI],
      post_logout_redirect_uris: [SIGNED_OUT],
      backchannel_logout_uri: `http://127.0.0.1:${port}/backchannel`,
    });
    expect(created.post_logout_redirect_uris).toEqual([SIGNED_OUT]);
    app = created;
    other = await create({ name: 'Other app', redirect_uris: [REDIRECT_URI] });
    user = await createUser(h);
  });
  afterAll(async () => {
    await h.close();
    await new Promise((r) => rx.server.close(r));
  });

  const query = (clientId: string, extra: Record<string, string> = {}) => ({
    response_type: 'code',
    scope: 'openid',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    state: 's',
    nonce: 'n',
    ...extra,
  });

  /** Signs in to `clientId` and returns the browser and the app's id_token. */
  async function signIn(clientId = app.app_id, secret = app.client_secret, agent: Agent = request.agent(h.publicApp)) {
    const { code } = callbackParams(await browserFlow(agent, query(clientId), user));
    const token = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(clientId, secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(token.status).toBe(200);
    return { agent, idToken: token.body.id_token as string };
  }
  const silent = async (agent: Agent) =>
    callbackParams(await agent.get('/authorize').query(query(app.app_id, { prompt: 'none' })));
  const errorCode = (res: request.Response) => /id="error-code">([^<]*)</.exec(res.text)?.[1];
  const errorAttribute = (res: request.Response) => /id="error-attribute">([^<]*)</.exec(res.text)?.[1];

  it('is advertised in discovery with back-channel logout', async () => {
    const res = await request(h.publicApp).get('/.well-known/openid-configuration');
    expect(res.body).toMatchObject({
      end_session_endpoint: `${BASE_URL}/logout`,
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
      frontchannel_logout_supported: false,
    });
  });

  it('a valid id_token_hint for the signed-in user ends the session at once, redirects with state; prompt=none is then login_required', async () => {
    const { agent, idToken } = await signIn();
    const res = await agent
      .get('/logout')
      .query({ id_token_hint: idToken, post_logout_redirect_uri: SIGNED_OUT, state: 'st-1', ui_locales: 'fr en' });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${SIGNED_OUT}?state=st-1`);
    expect((res.headers['set-cookie'] as unknown as string[]).some((c) => /^attest_session=;/.test(c))).toBe(true);
    expect(await silent(agent)).toEqual({
      error: 'login_required',
      error_description: expect.any(String),
      iss: BASE_URL,
      state: 's',
    });
  });

  it('an expired hint is still accepted; POST works like GET (303)', async () => {
    const { agent, idToken } = await signIn();
    const claims = jwt.decode(idToken) as Record<string, unknown>;
    const key = await h.ctx.tokens.keys.signingKey();
    const expired = jwt.sign({ ...claims, iat: 1000, exp: 2000 }, key.privateKey, {
      algorithm: 'RS256',
      keyid: key.kid,
    });
    const res = await agent
      .post('/logout')
      .type('form')
      .send({ id_token_hint: expired, client_id: app.app_id, post_logout_redirect_uri: SIGNED_OUT });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(SIGNED_OUT);
    expect((await silent(agent)).error).toBe('login_required');
  });

  it('a hint that cannot be verified (not a JWT, forged, or signed by a key no longer published) is treated as absent: the confirmation page, and confirming signs out', async () => {
    const { agent, idToken } = await signIn();
    const { privateKey } = await jose.generateKeyPair('RS256');
    const forged = await new jose.SignJWT(jwt.decode(idToken) as JWTPayload)
      .setProtectedHeader({ alg: 'RS256', kid: jwt.decode(idToken, { complete: true })!.header.kid! })
      .sign(privateKey);
    const gone = await new jose.SignJWT(jwt.decode(idToken) as JWTPayload)
      .setProtectedHeader({ alg: 'RS256', kid: 'a-key-that-left-the-jwks' })
      .sign(privateKey);
    for (const hint of ['not-a-jwt', forged, gone]) {
      for (const extra of [{}, { post_logout_redirect_uri: SIGNED_OUT, state: 'st-3' }]) {
        const page = await agent.get('/logout').query({ id_token_hint: hint, ...extra });
        expect(page.status).toBe(200);
        expect(page.text).toContain('action="/logout/confirm"');
        // without a verified hint or a client_id, the redirect cannot be checked: it is dropped, never followed
        expect(page.text).not.toContain(SIGNED_OUT);
      }
    }
    const page = await agent.get('/logout').query({ id_token_hint: gone, post_logout_redirect_uri: SIGNED_OUT });
    const confirmed = await agent
      .post('/logout/confirm')
      .type('form')
      .send({ csrf: hidden(page.text, 'csrf'), decision: 'logout' });
    expect(confirmed.status).toBe(200);
    expect(confirmed.text).toContain('You are signed out');
    expect((await silent(agent)).error).toBe('login_required');
  });

  it('after an emergency key rotation, the hint signed by the revoked key is treated as absent: confirm, and the session ends', async () => {
    const { agent, idToken } = await signIn();
    const rotated = await request(h.adminApp)
      .post('/admin/keys/rotate')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ revoke_previous: true });
    expect(rotated.status).toBe(200);
    const page = await agent
      .get('/logout')
      .query({ id_token_hint: idToken, client_id: app.app_id, post_logout_redirect_uri: SIGNED_OUT, state: 'st-4' });
    expect(page.status).toBe(200);
    expect(page.text).toContain('Logout app asks to sign you out');
    const confirmed = await agent
      .post('/logout/confirm')
      .type('form')
      .send({
        csrf: hidden(page.text, 'csrf'),
        client_id: app.app_id,
        post_logout_redirect_uri: SIGNED_OUT,
        state: 'st-4',
        decision: 'logout',
      });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.location).toBe(`${SIGNED_OUT}?state=st-4`);
    expect((await silent(agent)).error).toBe('login_required');
  });

  it('refuses a client_id that is not the hint’s audience, and unregistered redirects — without ending the session', async () => {
    const { agent, idToken } = await signIn();
    const cases: [Record<string, string>, string, string][] = [
      [{ id_token_hint: idToken, client_id: other.app_id }, 'invalid_request', 'client_id'],
      [{ client_id: 'app_00000000000000000000000000000000' }, 'invalid_client', 'client_id'],
      [{ post_logout_redirect_uri: SIGNED_OUT }, 'invalid_request', 'post_logout_redirect_uri'],
      [
        { id_token_hint: idToken, post_logout_redirect_uri: `${SIGNED_OUT}/x` },
        'invalid_request',
        'post_logout_redirect_uri',
      ],
      [
        { client_id: other.app_id, post_logout_redirect_uri: SIGNED_OUT },
        'invalid_request',
        'post_logout_redirect_uri',
      ],
      [{ id_token_hint: idToken, state: 'a' }, 'invalid_request', 'state'],
    ];
    for (const [params, code, attribute] of cases) {
      const res =
        attribute === 'state'
          ? await agent.get(`/logout?id_token_hint=${idToken}&state=a&state=b`)
          : await agent.get('/logout').query(params);
      expect([res.status, errorCode(res), errorAttribute(res)]).toEqual([400, code, attribute]);
      expect(res.headers.location).toBeUndefined();
    }
    expect((await silent(agent)).code).toMatch(/^[0-9a-f]{64}$/);
  });

  it('without a hint: a confirmation page; its POST needs the CSRF token; confirming ends the session and echoes state', async () => {
    const { agent } = await signIn();
    const page = await agent
      .get('/logout')
      .query({ client_id: app.app_id, post_logout_redirect_uri: SIGNED_OUT, state: 'st-2' });
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).toContain('Logout app asks to sign you out');
    const csrf = hidden(page.text, 'csrf');
    const form = { client_id: app.app_id, post_logout_redirect_uri: SIGNED_OUT, state: 'st-2', decision: 'logout' };

    const forged = await agent
      .post('/logout/confirm')
      .type('form')
      .send({ ...form, csrf: 'f'.repeat(64) });
    expect([forged.status, errorCode(forged)]).toEqual([403, 'invalid_csrf']);
    expect((await silent(agent)).code).toMatch(/^[0-9a-f]{64}$/);

    const stay = await agent
      .post('/logout/confirm')
      .type('form')
      .send({ ...form, decision: 'stay', csrf });
    expect(stay.status).toBe(303);
    expect((await silent(agent)).code).toMatch(/^[0-9a-f]{64}$/);

    const tampered = await agent
      .post('/logout/confirm')
      .type('form')
      .send({ ...form, post_logout_redirect_uri: 'https://evil.example/', csrf });
    expect([tampered.status, errorCode(tampered)]).toEqual([400, 'invalid_request']);

    const res = await agent
      .post('/logout/confirm')
      .type('form')
      .send({ ...form, csrf });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${SIGNED_OUT}?state=st-2`);
    expect((await silent(agent)).error).toBe('login_required');
  });

  it('a hint for another user than the signed-in one asks for confirmation rather than ending that session', async () => {
    const someone = await createUser(h);
    const theirs = await browserFlow(request.agent(h.publicApp), query(app.app_id), someone);
    const { code } = callbackParams(theirs);
    const token = await request(h.publicApp)
      .post('/token')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    const { agent } = await signIn();
    const res = await agent.get('/logout').query({ id_token_hint: token.body.id_token as string });
    expect(res.status).toBe(200);
    expect(res.text).toContain('action="/logout/confirm"');
    expect((await silent(agent)).code).toMatch(/^[0-9a-f]{64}$/);
  });

  it('sends each app of the ended session a signed logout_token, retrying after a failed answer', async () => {
    rx.received.length = 0;
    rx.statuses.push(500);
    const { agent, idToken } = await signIn();
    await signIn(other.app_id, other.client_secret, agent); // no back-channel URI: nothing sent to it
    const idClaims = jwt.decode(idToken) as Record<string, unknown>;
    expect((await agent.get('/logout').query({ id_token_hint: idToken })).status).toBe(200);

    await waitFor(() => rx.received.length === 1);
    await waitFor(
      async () =>
        (await h.storage.db.query<{ attempts: number }>('SELECT attempts FROM logout_deliveries'))[0]?.attempts === 1,
    );
    offsetMs += 6000;
    await waitFor(async () => (await h.ctx.signin.backChannelLogout.deliverDue()) === 1 || rx.received.length === 2);
    await waitFor(async () => rx.received.length === 2 && (await pendingDeliveries()) === 0);

    const jwks = jose.createLocalJWKSet((await request(h.publicApp).get('/jwks')).body as JSONWebKeySet);
    for (const delivery of rx.received) {
      expect(delivery.contentType).toBe('application/x-www-form-urlencoded');
      const logoutToken = new URLSearchParams(delivery.body).get('logout_token')!;
      const { payload, protectedHeader } = await jose.jwtVerify(logoutToken, jwks, {
        issuer: BASE_URL,
        audience: app.app_id,
        typ: 'logout+jwt',
      });
      expect(protectedHeader.alg).toBe('RS256');
      expect(payload).toEqual({
        iss: BASE_URL,
        aud: app.app_id,
        sub: idClaims.sub,
        sid: idClaims.sid,
        iat: expect.any(Number),
        exp: expect.any(Number),
        jti: expect.stringMatching(/^[0-9a-f]{64}$/),
        events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
      });
      expect(payload.nonce).toBeUndefined();
    }
    expect(rx.received).toHaveLength(2);
  });

  async function pendingDeliveries(): Promise<number> {
    const [row] = await h.storage.db.query<{ n: number }>('SELECT count(*)::int AS n FROM logout_deliveries');
    return row.n;
  }
});
