import { spawn } from 'node:child_process';
import http, { type IncomingMessage, type Server } from 'node:http';
import path from 'node:path';
import request from 'supertest';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { pairwiseSubject } from '../src/kernel/ids';
import { ADMIN_TOKEN, basic, createUser, hidden, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';

type OpenIdClient = typeof import('openid-client');
type Agent = ReturnType<typeof request.agent>;
type Client = { app_id: string; client_secret: string };

const PAYMENT = { type: 'payment', amount: '42.50', currency: 'EUR', payee: 'Acme Travel', reference: 'INV-2026-7' };
const ACTION = {
  type: 'action',
  description: 'Cancel the hotel booking',
  resource: 'https://hotel.example/bookings/77',
};

/**
 * Approval of one action (issue 42): CIBA Core 1.0 (poll and ping) with RFC 9396 authorization_details,
 * through openid-client's initiateBackchannelAuthentication and pollBackchannelAuthenticationGrant. The person
 * decides on the account page (its forms, posted with the password here; the passkey in ciba.browser.int.test.ts).
 */
describe('CIBA: approval of one action', () => {
  let oidc: OpenIdClient;
  let h: IdentityHarness;
  let server: Server;
  let issuer: string;
  let app: Client;
  let other: Client;
  let pingApp: Client;
  let person: { username: string; password: string; user_id: string };
  let sub: string;
  let offsetMs = 0;
  // the ping receiver: what it was sent
  let receiver: Server;
  let receiverUrl: string;
  const pings: { authorization?: string; body: string }[] = [];
  let pinged: () => void = () => undefined;

  const admin = (method: 'post' | 'patch', path: string) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  beforeAll(async () => {
    oidc = await import('openid-client');
    receiver = http.createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        pings.push({ authorization: req.headers.authorization, body });
        res.writeHead(204).end();
        pinged();
      });
    });
    const receiverPort = await freePort();
    await new Promise<void>((resolve) => receiver.listen(receiverPort, '127.0.0.1', () => resolve()));
    receiverUrl = `http://localhost:${receiverPort}/ciba-ping`;
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: issuer }, {}, { now: () => Date.now() + offsetMs });
    await new Promise<void>((resolve) => {
      server = h.publicApp.listen(port, '127.0.0.1', () => resolve());
    });
    const create = async (name: string, extra: Record<string, unknown>) =>
      (
        await admin('post', '/admin/apps')
          .send({ name, redirect_uris: [REDIRECT_URI], ...extra })
          .expect(201)
      ).body as Client & Record<string, unknown>;
    const created = await create('Travel agent', { backchannel_token_delivery_mode: 'poll' });
    expect(created.backchannel_token_delivery_mode).toBe('poll');
    expect(created.backchannel_client_notification_endpoint).toBeNull();
    app = created;
    other = await create('Other agent', { backchannel_token_delivery_mode: 'poll' });
    pingApp = await create('Ping agent', {
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: receiverUrl,
    });
  });
  // a person of their own for each test (what waits on their account page is that test's alone)
  beforeEach(async () => {
    person = await createUser(h);
    // the person signed in to the app once: it knows their pairwise sub (login_hint)
    sub = await h.ctx.oauth.grants.subjectFor(app.app_id, person.user_id);
  });
  afterAll(async () => {
    if (server) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    receiver?.closeAllConnections();
    await new Promise((r) => receiver?.close(r));
    await h?.close();
  });
  afterEach(() => {
    offsetMs = 0;
  });

  const configFor = (client: Client) =>
    oidc.discovery(new URL(issuer), client.app_id, undefined, oidc.ClientSecretBasic(client.client_secret), {
      execute: [oidc.allowInsecureRequests],
    });
  const ask = async (client: Client, extra: Record<string, string> = {}) =>
    oidc.initiateBackchannelAuthentication(await configFor(client), {
      scope: 'openid profile',
      login_hint: client === app ? sub : await h.ctx.oauth.grants.subjectFor(client.app_id, person.user_id),
      binding_message: 'TRIP-7',
      authorization_details: JSON.stringify([PAYMENT]),
      ...extra,
    });
  const poll = (client: Client, authReqId: string) =>
    request(h.publicApp)
      .post('/token')
      .type('form')
      .set('Authorization', basic(client.app_id, client.client_secret))
      .send({ grant_type: 'urn:openid:params:grant-type:ciba', auth_req_id: authReqId });

  async function signedIn(): Promise<Agent> {
    const agent = request.agent(h.publicApp);
    const page = await agent.get('/signin?next=account');
    const posted = await agent
      .post('/signin')
      .type('form')
      .send({
        next: 'account',
        csrf: hidden(page.text, 'csrf'),
        username: person.username,
        password: person.password,
      });
    expect(posted.headers.location).toBe('/account');
    return agent;
  }
  /** The account page's form fields of one pending request. */
  async function pendingOnPage(agent: Agent, requestCount = 1) {
    const page = await agent.get('/account').expect(200);
    const items = [...page.text.matchAll(/<li data-approval="(bcr_[0-9a-f]{32})">/g)].map((m) => m[1]);
    expect(items).toHaveLength(requestCount);
    return { page: page.text, requestId: items[items.length - 1], csrf: hidden(page.text, 'csrf') };
  }
  const approveWithPassword = (agent: Agent, csrf: string, requestId: string, password = person.password) =>
    agent.post('/account/approvals/approve').type('form').send({ csrf, request_id: requestId, password });

  it('the example agent (examples/delegating-agent/approve-payment.mjs) gets the payment the person approved', async () => {
    const script = path.join(__dirname, '..', '..', '..', 'examples', 'delegating-agent', 'approve-payment.mjs');
    const child = spawn(process.execPath, [script, '42.50', 'EUR', 'Acme Travel', 'INV-2026-7'], {
      env: {
        PATH: process.env.PATH,
        ISSUER: issuer,
        AGENT_ID: app.app_id,
        AGENT_SECRET: app.client_secret!,
        LOGIN_HINT: sub,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    // the person signs in and finds the request on the account page (once the agent has asked)
    const agent = await signedIn();
    let pending: { requestId: string; csrf: string; page: string } | undefined;
    while (!pending) {
      const page = await agent.get('/account').expect(200);
      const id = /<li data-approval="(bcr_[0-9a-f]{32})">/.exec(page.text)?.[1];
      if (id) pending = { requestId: id, csrf: hidden(page.text, 'csrf'), page: page.text };
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(pending.page).toContain('Pay 42.50 EUR to Acme Travel (reference: INV-2026-7)');
    await approveWithPassword(agent, pending.csrf, pending.requestId).expect(303);
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/Waiting for the person to approve PAY-\d{4}/);
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(out).toMatchObject({ authorization_details: [PAYMENT], sub, acr: expect.any(String) });
    expect(pending.page).toContain(`<strong data-binding-message>${String(out.binding_message)}</strong>`);
  }, 60_000);

  it('advertises CIBA and the detail types in discovery', async () => {
    const res = await request(h.publicApp).get('/.well-known/openid-configuration').expect(200);
    expect(res.body).toMatchObject({
      backchannel_authentication_endpoint: `${issuer}/bc-authorize`,
      backchannel_token_delivery_modes_supported: ['poll', 'ping'],
      backchannel_user_code_parameter_supported: false,
      authorization_details_types_supported: ['payment', 'action'],
    });
    expect(res.body.grant_types_supported).toContain('urn:openid:params:grant-type:ciba');
    expect(res.body).not.toHaveProperty('backchannel_authentication_request_signing_alg_values_supported');
  });

  it('a payment approved on the account page with the password: the tokens carry the detail, acr and the approval time, once', async () => {
    const config = await configFor(app);
    const asked = await ask(app);
    expect(asked.expires_in).toBe(300);
    expect(asked.interval).toBe(5);
    expect(asked.auth_req_id).toMatch(/^[0-9a-f]{64}$/);

    // before the person decides: authorization_pending, then slow_down for a poll sooner than the interval
    const pending = await poll(app, asked.auth_req_id).expect(400);
    expect(pending.body.error).toBe('authorization_pending');
    const fast = await poll(app, asked.auth_req_id).expect(400);
    expect(fast.body.error).toBe('slow_down');

    const agent = await signedIn();
    // the notice on the sign-in landing, and the request in plain words on the account page
    const landing = await agent.get('/signin?next=account');
    expect(landing.text).toContain('id="pending-approvals"');
    const { page, requestId, csrf } = await pendingOnPage(agent);
    expect(page).toContain('id="pending-approvals"');
    expect(page).toContain('<strong>Travel agent</strong> asks you to approve:');
    expect(page).toContain('<strong data-binding-message>TRIP-7</strong>');
    expect(page).toContain('<li data-detail-type="payment">Pay 42.50 EUR to Acme Travel (reference: INV-2026-7)</li>');

    // a wrong password approves nothing
    const wrong = await approveWithPassword(agent, csrf, requestId, 'not the password').expect(400);
    expect(wrong.text).toContain('<code id="error-code">invalid_password</code>');
    expect((await poll(app, asked.auth_req_id)).body.error).toMatch(/authorization_pending|slow_down/);

    const approved = await approveWithPassword(agent, csrf, requestId).expect(303);
    expect(approved.headers.location).toBe('/account?approval=approved#approvals');
    const after = await agent.get('/account?approval=approved').expect(200);
    expect(after.text).toContain('id="approval-notice"');
    expect(after.text).not.toContain('data-approval=');
    expect(after.text).not.toContain('id="pending-approvals"');
    // approving again: the request is no longer waiting
    const twice = await approveWithPassword(agent, csrf, requestId).expect(404);
    expect(twice.text).toContain('<code id="error-code">not_found</code>');

    const tokens = await oidc.pollBackchannelAuthenticationGrant(config, { ...asked, interval: 0 });
    const idClaims = tokens.claims()!;
    expect(idClaims.sub).toBe(sub);
    expect(idClaims.acr).toBe('urn:attest:loa:orb');
    expect(idClaims.authorization_details).toEqual([PAYMENT]);
    expect(idClaims.amr).toEqual(['pwd']);
    expect(tokens.authorization_details).toEqual([PAYMENT]);
    const access = JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(access).toMatchObject({
      sub,
      client_id: app.app_id,
      scope: 'openid profile',
      acr: idClaims.acr,
      auth_time: idClaims.auth_time,
      authorization_details: [PAYMENT],
    });
    // the approval's time: the moment the person proved themselves, in the last minute
    expect(Math.abs((idClaims.auth_time as number) - Date.now() / 1000)).toBeLessThan(60);
    // the token works at /userinfo (the approval granted the scopes asked); /introspect shows what was approved
    await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
    const introspected = await request(h.publicApp)
      .post('/introspect')
      .type('form')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .send({ token: tokens.access_token })
      .expect(200);
    expect(introspected.body).toMatchObject({ active: true, sub, authorization_details: [PAYMENT], acr: idClaims.acr });

    // an approval is used once
    const reused = await poll(app, asked.auth_req_id).expect(400);
    expect(reused.body.error).toBe('invalid_grant');
    // audited: asked, approved, redeemed
    const events = (
      await h.ctx.kernel.audit.list({ types: ['ciba.requested', 'ciba.approved', 'ciba.redeemed'], limit: 1000 })
    ).filter((e) => e.detail.request_id === requestId);
    expect(events.map((e) => e.type).sort()).toEqual(['ciba.approved', 'ciba.redeemed', 'ciba.requested']);
    expect(events.every((e) => e.subject === person.user_id)).toBe(true);

    // the person withdraws the app on the account page: the approval's token stops at once
    await agent.post('/account/consents/withdraw').type('form').send({ csrf, app_id: app.app_id }).expect(303);
    const ended = await request(h.publicApp)
      .post('/introspect')
      .type('form')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .send({ token: tokens.access_token })
      .expect(200);
    expect(ended.body).toEqual({ active: false });
  });

  it('another app cannot redeem the auth_req_id (invalid_grant)', async () => {
    const asked = await ask(app);
    const res = await poll(other, asked.auth_req_id).expect(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  it('single use under concurrent polls: of six parallel polls of an approved request, exactly one gets the tokens', async () => {
    const asked = await ask(app);
    // polled once before the person decides: the request is then known here as pending (answered without the
    // database), and the approval must still reach the next poll
    expect((await poll(app, asked.auth_req_id).expect(400)).body.error).toBe('authorization_pending');
    const agent = await signedIn();
    const { requestId, csrf } = await pendingOnPage(agent);
    await approveWithPassword(agent, csrf, requestId).expect(303);

    const answers = await Promise.all(Array.from({ length: 6 }, () => poll(app, asked.auth_req_id)));
    const answered = answers.filter((a) => a.status === 200);
    expect(answered).toHaveLength(1);
    expect(answered[0].body).toMatchObject({
      token_type: 'Bearer',
      scope: 'openid profile',
      authorization_details: [PAYMENT],
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      id_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
    });
    expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.body.error])).toEqual(
      Array.from({ length: 5 }, () => [400, 'invalid_grant']),
    );
    const [row] = await h.storage.db.query<{ status: string }>(
      'SELECT status FROM backchannel_requests WHERE id = $1',
      [requestId],
    );
    expect(row.status).toBe('redeemed');
    const redeemed = (await h.ctx.kernel.audit.list({ types: ['ciba.redeemed'], limit: 1000 })).filter(
      (e) => e.detail.request_id === requestId,
    );
    expect(redeemed).toHaveLength(1);
    // and a poll after them all: used once
    expect((await poll(app, asked.auth_req_id).expect(400)).body.error).toBe('invalid_grant');
  });

  it('parallel polls of a pending request: one authorization_pending, the others slow_down; a denial reaches the next poll', async () => {
    const asked = await ask(app);
    const answers = await Promise.all(Array.from({ length: 6 }, () => poll(app, asked.auth_req_id)));
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 6 }, () => 400));
    expect(answers.map((a) => a.body.error).sort()).toEqual([
      'authorization_pending',
      ...Array.from({ length: 5 }, () => 'slow_down'),
    ]);
    // still pending, polled again (known here as pending): slow_down, within the interval
    expect((await poll(app, asked.auth_req_id).expect(400)).body.error).toBe('slow_down');
    const agent = await signedIn();
    const { requestId, csrf } = await pendingOnPage(agent);
    await agent.post('/account/approvals/deny').type('form').send({ csrf, request_id: requestId }).expect(303);
    const after = await Promise.all(Array.from({ length: 3 }, () => poll(app, asked.auth_req_id)));
    expect(after.map((a) => [a.status, a.body.error])).toEqual(Array.from({ length: 3 }, () => [400, 'access_denied']));
  });

  it('a denied request answers access_denied', async () => {
    const config = await configFor(app);
    const asked = await ask(app, { authorization_details: JSON.stringify([ACTION]) });
    const agent = await signedIn();
    const { page, requestId, csrf } = await pendingOnPage(agent);
    expect(page).toContain(
      '<li data-detail-type="action">Cancel the hotel booking — on https://hotel.example/bookings/77</li>',
    );
    const denied = await agent.post('/account/approvals/deny').type('form').send({ csrf, request_id: requestId });
    expect(denied.status).toBe(303);
    expect(denied.headers.location).toBe('/account?approval=denied#approvals');
    await expect(oidc.pollBackchannelAuthenticationGrant(config, { ...asked, interval: 0 })).rejects.toMatchObject({
      error: 'access_denied',
    });
  });

  it('an expired request answers expired_token, and is no longer shown', async () => {
    const asked = await ask(app, { requested_expiry: '60' });
    expect(asked.expires_in).toBe(60);
    offsetMs = 61_000;
    const res = await poll(app, asked.auth_req_id).expect(400);
    expect(res.body.error).toBe('expired_token');
    const agent = await signedIn();
    const page = await agent.get('/account').expect(200);
    expect(page.text).not.toContain('data-approval=');
  });

  it('refuses what it does not understand, in CIBA Core §13 terms', async () => {
    const send = (form: Record<string, string>, client: Client = app) =>
      request(h.publicApp)
        .post('/bc-authorize')
        .type('form')
        .set('Authorization', basic(client.app_id, client.client_secret))
        .send({ scope: 'openid', login_hint: sub, ...form });
    const unknownType = await send({
      authorization_details: JSON.stringify([{ type: 'wire_transfer', amount: '1' }]),
    }).expect(400);
    expect(unknownType.body).toMatchObject({
      error: 'invalid_authorization_details',
      attribute: 'authorization_details',
    });
    expect(unknownType.body.error_description).toContain('"wire_transfer" is not a type this server understands');
    await oidc
      .initiateBackchannelAuthentication(await configFor(app), {
        scope: 'openid',
        login_hint: sub,
        authorization_details: JSON.stringify([{ type: 'payment', amount: 12.5, currency: 'EUR', payee: 'x' }]),
      })
      .then(
        () => {
          throw new Error('accepted a float amount');
        },
        (err: { error?: string }) => expect(err.error).toBe('invalid_authorization_details'),
      );
    // details sent as nested form fields: refused, never taken for a plain sign-in
    const nested = await send({ 'authorization_details[0][type]': 'payment', 'authorization_details[0][amount]': '9' });
    expect(nested.status).toBe(400);
    expect(nested.body).toMatchObject({ error: 'invalid_authorization_details', attribute: 'authorization_details' });
    const extraField = await send({ authorization_details: JSON.stringify([{ ...ACTION, privileges: ['all'] }]) });
    expect(extraField.body.error).toBe('invalid_authorization_details');
    expect((await send({ login_hint: 'nobody-this-app-knows' }).expect(400)).body.error).toBe('unknown_user_id');
    // a sub of another app is nobody for this one (pairwise)
    const otherSub = await h.ctx.oauth.grants.subjectFor(pingApp.app_id, person.user_id);
    expect((await send({ login_hint: otherSub }).expect(400)).body.error).toBe('unknown_user_id');
    expect((await send({ scope: 'profile' }).expect(400)).body).toMatchObject({
      error: 'invalid_request',
      attribute: 'scope',
    });
    expect((await send({ binding_message: 'x'.repeat(101) }).expect(400)).body.error).toBe('invalid_binding_message');
    // what is compared by eye must read as it is: no bidirectional override, invisible or blank-only text
    for (const message of ['OK\u202Egnp.exe', 'AB\u200BCD', 'line\u2028break', '   '])
      expect((await send({ binding_message: message }).expect(400)).body).toMatchObject({
        error: 'invalid_binding_message',
        attribute: 'binding_message',
      });
    for (const payee of ['Acme\u202E)1 :ecnerefer(', 'Ac\u200Dme', 'Ac\u2029me', 'Ac\u3164me', 'Ac\uE000me'])
      expect(
        (await send({ authorization_details: JSON.stringify([{ ...PAYMENT, payee }]) }).expect(400)).body.error,
      ).toBe('invalid_authorization_details');
    expect((await send({ requested_expiry: '5' }).expect(400)).body.attribute).toBe('requested_expiry');
    // two hints (login_hint is always sent here)
    expect((await send({ login_hint_token: 'eyJ' }).expect(400)).body).toMatchObject({
      error: 'invalid_request',
      attribute: 'login_hint',
    });
    // a ping app must send its client_notification_token
    const pingSub = await h.ctx.oauth.grants.subjectFor(pingApp.app_id, person.user_id);
    expect((await send({ login_hint: pingSub }, pingApp).expect(400)).body.attribute).toBe('client_notification_token');
    // an app without a CIBA mode
    const plain = (
      await admin('post', '/admin/apps')
        .send({ name: 'No CIBA', redirect_uris: [REDIRECT_URI] })
        .expect(201)
    ).body as Client;
    expect((await send({}, plain).expect(400)).body.error).toBe('unauthorized_client');
    // wrong credentials
    const wrongSecret = await send({}, { ...app, client_secret: 'sk_wrong' }).expect(401);
    expect(wrongSecret.body.error).toBe('invalid_client');
  });

  it('a login_hint_token the person made on the account page names them to that agent only, until they end it', async () => {
    // an assistant that never signed the person in: it cannot know their pairwise sub
    const assistant = (
      await admin('post', '/admin/apps')
        .send({ name: 'Pay assistant', redirect_uris: [REDIRECT_URI], backchannel_token_delivery_mode: 'poll' })
        .expect(201)
    ).body as Client;
    const send = (form: Record<string, string>, client: Client) =>
      request(h.publicApp)
        .post('/bc-authorize')
        .type('form')
        .set('Authorization', basic(client.app_id, client.client_secret))
        .send({ scope: 'openid', ...form });
    const browser = await signedIn();
    const page = await browser.get('/account').expect(200);
    expect(page.text).toContain('<h2 id="login-hints">Let an agent ask for your approval</h2>');
    const make = async (clientId: string, status: number) => {
      const csrf = hidden((await browser.get('/account').expect(200)).text, 'csrf');
      return browser.post('/account/login-hint-tokens').type('form').send({ csrf, client_id: clientId }).expect(status);
    };
    // only an enabled app with a CIBA mode
    const plain = (
      await admin('post', '/admin/apps')
        .send({ name: 'No CIBA', redirect_uris: [REDIRECT_URI] })
        .expect(201)
    ).body as Client;
    for (const clientId of ['no-such-app', plain.app_id]) {
      const refused = await make(clientId, 404);
      expect(refused.text).toContain('No app that asks for approvals (CIBA) has that client id');
    }
    const made = await make(assistant.app_id, 200);
    expect(made.headers['cache-control']).toBe('no-store');
    expect(made.text).toContain('A login hint token for Pay assistant');
    const token = /<textarea id="login-hint-token"[^>]*>([^<]+)<\/textarea>/.exec(made.text)![1];
    const [header, payload] = token
      .split('.')
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>);
    // computed, not remembered: the mapping of sub to person is made only by the agent's first request with the hint
    const assistantSub = pairwiseSubject(h.config.secret, assistant.app_id, person.user_id);
    // MACed by Attest (HS256, a key of IDENTITY_SECRET), not signed with the rotating keys of /jwks
    expect(header).toEqual({ alg: 'HS256', typ: 'login-hint+jwt' });
    expect(payload).toMatchObject({ iss: issuer, aud: assistant.app_id, ref: expect.any(String) });
    // the person is sealed in it: the agent learns neither their sub (which login_hint would take, past any end)
    // nor their account id until they approve something
    expect(payload).not.toHaveProperty('sub');
    expect(token).not.toContain(person.user_id);
    expect(JSON.stringify(payload)).not.toContain(person.user_id);
    expect((await send({ login_hint: assistantSub }, assistant).expect(400)).body.error).toBe('unknown_user_id');
    expect(payload.exp).toBe((payload.iat as number) + 30 * 24 * 3600);
    // listed among the agents acting for the person, where it can be ended
    const listed = await browser.get('/account').expect(200);
    expect(listed.text).toContain(`<li data-agent="${assistant.app_id}">`);
    expect(listed.text).toContain('may ask for your approval');

    // the assistant names the person with it (openid-client), and the request waits on their page
    const config = await configFor(assistant);
    const asked = await oidc.initiateBackchannelAuthentication(config, {
      scope: 'openid',
      login_hint_token: token,
      binding_message: 'PAY-42',
      authorization_details: JSON.stringify([PAYMENT]),
    });
    const { requestId, csrf } = await pendingOnPage(browser);
    await approveWithPassword(browser, csrf, requestId).expect(303);
    const tokens = await oidc.pollBackchannelAuthenticationGrant(config, { ...asked, interval: 0 });
    expect(tokens.claims()).toMatchObject({
      sub: assistantSub,
      aud: assistant.app_id,
      authorization_details: [PAYMENT],
    });

    // another app cannot use it, and it is no id_token
    expect((await send({ login_hint_token: token }, app).expect(400)).body).toMatchObject({
      error: 'invalid_request',
      attribute: 'login_hint_token',
    });
    expect((await send({ id_token_hint: token }, assistant).expect(400)).body).toMatchObject({
      error: 'invalid_request',
      attribute: 'id_token_hint',
    });
    // a forged one (its signature changed) is refused
    const forged = `${token.slice(0, token.lastIndexOf('.') + 1)}${'A'.repeat(token.length - token.lastIndexOf('.') - 1)}`;
    expect((await send({ login_hint_token: forged }, assistant).expect(400)).body.attribute).toBe('login_hint_token');
    // past its 30 days: expired_login_hint_token (CIBA Core §13)
    offsetMs = 30 * 24 * 3600 * 1000 + 1000;
    expect((await send({ login_hint_token: token }, assistant).expect(400)).body).toMatchObject({
      error: 'expired_login_hint_token',
      attribute: 'login_hint_token',
    });
    // expired or not, it is nothing to another app
    expect((await send({ login_hint_token: token }, app).expect(400)).body.error).toBe('invalid_request');
    offsetMs = 5000;
    // the person ends the assistant: the token no longer names them, and nothing new waits for them
    const csrfNow = hidden((await browser.get('/account').expect(200)).text, 'csrf');
    await browser
      .post('/account/agents/end')
      .type('form')
      .send({ csrf: csrfNow, agent_id: assistant.app_id })
      .expect(303);
    offsetMs = 10_000;
    expect((await send({ login_hint_token: token }, assistant).expect(403)).body).toMatchObject({
      error: 'access_denied',
      attribute: 'login_hint_token',
    });
    expect((await browser.get('/account').expect(200)).text).not.toContain('data-approval=');
    // a new one made after the end names them again
    const again = /<textarea id="login-hint-token"[^>]*>([^<]+)<\/textarea>/.exec(
      (await make(assistant.app_id, 200)).text,
    )![1];
    await send({ login_hint_token: again }, assistant).expect(200);
    expect((await send({ login_hint_token: token }, assistant).expect(403)).body.error).toBe('access_denied');
  });

  it('holds the cap of five when the requests come at once (counted and inserted under one lock)', async () => {
    const someone = await createUser(h);
    const theirSub = await h.ctx.oauth.grants.subjectFor(app.app_id, someone.user_id);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        request(h.publicApp)
          .post('/bc-authorize')
          .type('form')
          .set('Authorization', basic(app.app_id, app.client_secret))
          .send({ scope: 'openid', login_hint: theirSub }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(5).fill(200), ...Array(7).fill(429)]);
    const [row] = await h.storage.db.query<{ n: string | number }>(
      "SELECT count(*) AS n FROM backchannel_requests WHERE user_id = $1 AND status = 'pending'",
      [someone.user_id],
    );
    expect(Number(row.n)).toBe(5);
  });

  it('at most five requests of one app wait for one person', async () => {
    for (let i = 0; i < 5; i++) await ask(app);
    const sixth = await request(h.publicApp)
      .post('/bc-authorize')
      .type('form')
      .set('Authorization', basic(app.app_id, app.client_secret))
      .send({ scope: 'openid', login_hint: sub })
      .expect(429);
    expect(sixth.body).toMatchObject({ code: 'too_many_requests', error: 'temporarily_unavailable' });
    // another app may still ask
    const otherSub = await h.ctx.oauth.grants.subjectFor(other.app_id, person.user_id);
    await request(h.publicApp)
      .post('/bc-authorize')
      .type('form')
      .set('Authorization', basic(other.app_id, other.client_secret))
      .send({ scope: 'openid', login_hint: otherSub })
      .expect(200);
  });

  it('ping mode: the decision is announced to the registered endpoint, with the client_notification_token', async () => {
    const config = await configFor(pingApp);
    const token = 'notify-me-0123456789';
    const asked = await ask(pingApp, { client_notification_token: token });
    const agent = await signedIn();
    const { requestId, csrf } = await pendingOnPage(agent);
    const delivered = new Promise<void>((resolve) => (pinged = resolve));
    await approveWithPassword(agent, csrf, requestId).expect(303);
    await delivered;
    expect(pings).toHaveLength(1);
    expect(pings[0].authorization).toBe(`Bearer ${token}`);
    expect(JSON.parse(pings[0].body)).toEqual({ auth_req_id: asked.auth_req_id });
    // the token is stored sealed, never in clear
    const rows = await h.storage.db.query<{ notification_token: string }>(
      'SELECT notification_token FROM backchannel_requests WHERE id = $1',
      [requestId],
    );
    expect(rows[0].notification_token).not.toContain(token);
    const tokens = await oidc.pollBackchannelAuthenticationGrant(config, { ...asked, interval: 0 });
    expect(tokens.claims()!.authorization_details).toEqual([PAYMENT]);
  });

  it('the app settings: ping needs an endpoint, through the outbound guard', async () => {
    const noEndpoint = await admin('patch', `/admin/apps/${app.app_id}`)
      .send({ backchannel_token_delivery_mode: 'ping' })
      .expect(400);
    expect(noEndpoint.body.attribute).toBe('backchannel_client_notification_endpoint');
    const notHttps = await admin('patch', `/admin/apps/${app.app_id}`)
      .send({ backchannel_token_delivery_mode: 'ping', backchannel_client_notification_endpoint: 'ftp://x.example' })
      .expect(400);
    expect(notHttps.body.attribute).toBe('backchannel_client_notification_endpoint');
    const set = await admin('patch', `/admin/apps/${other.app_id}`)
      .send({ backchannel_token_delivery_mode: 'ping', backchannel_client_notification_endpoint: receiverUrl })
      .expect(200);
    expect(set.body).toMatchObject({
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: receiverUrl,
    });
    const off = await admin('patch', `/admin/apps/${other.app_id}`)
      .send({ backchannel_token_delivery_mode: null })
      .expect(200);
    expect(off.body.backchannel_token_delivery_mode).toBeNull();
    // turning CIBA off clears its ping endpoint too
    expect(off.body.backchannel_client_notification_endpoint).toBeNull();
  });
});
