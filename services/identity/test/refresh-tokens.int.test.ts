import { createHash, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { refreshStore } from '../src/refresh';
import {
  ADMIN_TOKEN,
  basic,
  browserFlow,
  callbackParams,
  createUser,
  identityHarness,
  REDIRECT_URI,
  type IdentityHarness,
} from './support';

type OpenIdClient = typeof import('openid-client');
type Jose = typeof import('jose');
type Client = { app_id: string; client_secret?: string };

const TOOLS = 'https://tools.example.com/mcp';

/**
 * Refresh tokens (issue 41, item 3): offline_access gives one; every use rotates it; a reused one of a public
 * client ends the family; bound to the DPoP key; scope and resource narrow, never widen; an absolute
 * lifetime; ended with their session or consent. openid-client's refreshTokenGrant drives the rotation.
 */
describe('refresh tokens', () => {
  let oidc: OpenIdClient;
  let jose: Jose;
  let h: IdentityHarness;
  let server: Server;
  let issuer: string;
  let clock = 0;
  let publicApp: Client;
  let app: Client;
  let user: { username: string; password: string; user_id: string };

  const admin = (method: 'post' | 'get' | 'patch' | 'delete', path: string) =>
    request(h.adminApp)[method](path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  beforeAll(async () => {
    oidc = await import('openid-client');
    jose = await import('jose');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    h = await identityHarness(
      { BASE_URL: issuer, REFRESH_TOKEN_TTL_SECONDS: '3600' },
      {},
      { now: () => Date.now() + clock },
    );
    await new Promise<void>((resolve) => {
      server = h.publicApp.listen(port, '127.0.0.1', () => resolve());
    });
    publicApp = (
      await admin('post', '/admin/apps')
        .send({ name: 'CLI', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' })
        .expect(201)
    ).body;
    app = (
      await admin('post', '/admin/apps')
        .send({ name: 'Web', redirect_uris: [REDIRECT_URI] })
        .expect(201)
    ).body;
    user = await createUser(h);
    await admin('post', '/admin/resources')
      .send({ uri: TOOLS, name: 'Tools', scopes: ['tools:read', 'tools:write'] })
      .expect(201);
  });
  afterAll(async () => {
    if (server) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    await h?.close();
  });

  const configFor = (client: Client) =>
    oidc.discovery(
      new URL(issuer),
      client.app_id,
      undefined,
      client.client_secret ? oidc.ClientSecretBasic(client.client_secret) : oidc.None(),
      { execute: [oidc.allowInsecureRequests] },
    );

  /** Signs the person in through the browser part, and exchanges the code with openid-client. */
  async function signIn(
    client: Client,
    extra: Record<string, string> = {},
    options: { DPoP?: ReturnType<OpenIdClient['getDPoPHandle']> } = {},
  ) {
    const config = await configFor(client);
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const query: Record<string, string> = {
      response_type: 'code',
      client_id: client.app_id,
      redirect_uri: REDIRECT_URI,
      scope: 'openid profile offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...extra,
    };
    const res = await browserFlow(request.agent(h.publicApp), query, user);
    const callback = new URL(`${REDIRECT_URI}?${new URLSearchParams(callbackParams(res)).toString()}`);
    const tokens = await oidc.authorizationCodeGrant(
      config,
      callback,
      { pkceCodeVerifier: verifier, expectedState: state },
      undefined,
      options,
    );
    return { config, tokens };
  }

  const introspect = (token: string) =>
    request(h.publicApp)
      .post('/introspect')
      .set('Authorization', basic(app.app_id, app.client_secret!))
      .type('form')
      .send({ token });
  const refreshRaw = (client: Client, form: Record<string, string>) => {
    const req = request(h.publicApp).post('/token').type('form');
    if (client.client_secret) req.set('Authorization', basic(client.app_id, client.client_secret));
    return req.send({
      grant_type: 'refresh_token',
      ...(client.client_secret ? {} : { client_id: client.app_id }),
      ...form,
    });
  };
  const oauthError = async (promise: Promise<unknown>) => {
    const err = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(oidc.ResponseBodyError);
    return (err as InstanceType<OpenIdClient['ResponseBodyError']>).error;
  };

  it('says refresh_token and offline_access in discovery', async () => {
    const doc = (await request(h.publicApp).get('/.well-known/openid-configuration').expect(200)).body;
    expect(doc.grant_types_supported).toContain('refresh_token');
    expect(doc.scopes_supported).toContain('offline_access');
  });

  it('gives no refresh token without offline_access (as before)', async () => {
    const { tokens } = await signIn(app, { scope: 'openid profile' });
    expect(tokens.refresh_token).toBeUndefined();
  });

  it('rotates on every use (openid-client refreshTokenGrant); a public client’s reused token ends the whole family', async () => {
    const { config, tokens } = await signIn(publicApp);
    expect(tokens.refresh_token).toMatch(/^[0-9a-f]{64}$/);
    const first = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(first.refresh_token).toMatch(/^[0-9a-f]{64}$/);
    expect(first.refresh_token).not.toBe(tokens.refresh_token);
    expect(first.scope).toBe('openid profile');
    const claims = jose.decodeJwt(first.access_token);
    expect(claims).toMatchObject({
      aud: issuer,
      client_id: publicApp.app_id,
      sub: jose.decodeJwt(tokens.id_token!).sub,
    });
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
    // only the hash is stored
    const rows = await h.storage.db.query<{ token_hash: string }>('SELECT token_hash FROM refresh_tokens');
    expect(rows.map((r) => r.token_hash)).not.toContain(second.refresh_token);

    // the first token again: a thief or a replay — the family ends, the latest token too, and its access token
    expect(await oauthError(oidc.refreshTokenGrant(config, first.refresh_token!))).toBe('invalid_grant');
    expect(await oauthError(oidc.refreshTokenGrant(config, second.refresh_token!))).toBe('invalid_grant');
    const userinfo = await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${second.access_token}`);
    expect(userinfo.status).toBe(401);
    const [event] = await h.ctx.kernel.audit.list({ types: ['token.revoked'], limit: 1 });
    expect(event).toMatchObject({ subject: publicApp.app_id, detail: { reason: 'refresh_token_reused' } });
  });

  it('a confidential app: a used token is refused, its family goes on; another app cannot use it', async () => {
    const { config, tokens } = await signIn(app);
    const next = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).toBe('invalid_grant');
    const other = await refreshRaw(publicApp, { refresh_token: next.refresh_token! }).expect(400);
    expect(other.body.error).toBe('invalid_grant');
    const again = await oidc.refreshTokenGrant(config, next.refresh_token!);
    expect((await introspect(again.access_token).expect(200)).body.active).toBe(true);
  });

  it('the same token sent twice at once: one answer rotates it, the other is refused (a confidential app’s family goes on)', async () => {
    const { tokens } = await signIn(app);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => refreshRaw(app, { refresh_token: tokens.refresh_token! })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400]);
    for (const refused of answers.filter((a) => a.status === 400)) expect(refused.body.error).toBe('invalid_grant');
    const winner = answers.find((a) => a.status === 200)!.body as { refresh_token: string; access_token: string };
    const rows = await h.storage.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM refresh_tokens WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE used_at IS NOT NULL ORDER BY used_at DESC LIMIT 1)',
    );
    expect(rows[0]!.n).toBe(2); // the used token and the one rotation issued, not one per request
    expect((await refreshRaw(app, { refresh_token: winner.refresh_token }).expect(200)).body.refresh_token).toEqual(
      expect.any(String),
    );
  });

  it('a public client’s token sent twice at once ends the family: the winner’s new token is refused too', async () => {
    const { tokens } = await signIn(publicApp);
    const answers = await Promise.all(
      Array.from({ length: 2 }, () => refreshRaw(publicApp, { refresh_token: tokens.refresh_token! })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    const winner = answers.find((a) => a.status === 200)!.body as { refresh_token: string; access_token: string };
    const late = await refreshRaw(publicApp, { refresh_token: winner.refresh_token }).expect(400);
    expect(late.body.error).toBe('invalid_grant');
    const userinfo = await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${winner.access_token}`);
    expect(userinfo.status).toBe(401);
  });

  it('/revoke (RFC 7009) of a refresh token ends its family and the access tokens it gave; another app’s try changes nothing', async () => {
    const { config, tokens } = await signIn(app);
    const next = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    // another app cannot revoke it: 200 and nothing changes (RFC 7009 §2.1)
    await request(h.publicApp)
      .post('/revoke')
      .type('form')
      .send({ token: next.refresh_token!, client_id: publicApp.app_id })
      .expect(200);
    expect((await introspect(next.access_token).expect(200)).body.active).toBe(true);

    await oidc.tokenRevocation(config, next.refresh_token!, { token_type_hint: 'refresh_token' });
    expect(await oauthError(oidc.refreshTokenGrant(config, next.refresh_token!))).toBe('invalid_grant');
    expect((await introspect(next.access_token).expect(200)).body.active).toBe(false);
    expect((await introspect(tokens.access_token).expect(200)).body.active).toBe(false);
    const [event] = await h.ctx.kernel.audit.list({ types: ['token.revoked'], limit: 1 });
    expect(event).toMatchObject({
      subject: app.app_id,
      actor: app.app_id,
      detail: { reason: 'refresh_token_revoked' },
    });
  });

  it('a public client revokes its own refresh token with its client_id (RFC 7009 §2.1)', async () => {
    const { config, tokens } = await signIn(publicApp);
    await oidc.tokenRevocation(config, tokens.refresh_token!);
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).toBe('invalid_grant');
    const userinfo = await request(h.publicApp).get('/userinfo').set('Authorization', `Bearer ${tokens.access_token}`);
    expect(userinfo.status).toBe(401);
  });

  const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

  it('one use wins when a token is presented twice at once: one answer, one successor stored', async () => {
    const { tokens } = await signIn(app);
    // the token just issued (remembered by the process) and once more through the stored row
    const once = await refreshRaw(app, { refresh_token: tokens.refresh_token! }).expect(200);
    const answers = await Promise.all([
      refreshRaw(app, { refresh_token: once.body.refresh_token }),
      refreshRaw(app, { refresh_token: once.body.refresh_token }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    const lost = answers.find((a) => a.status === 400)!;
    expect(lost.body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'This refresh token was used already.',
    });
    const won = answers.find((a) => a.status === 200)!;
    const [{ family_id: family }] = await h.storage.db.query<{ family_id: string }>(
      'SELECT family_id FROM refresh_tokens WHERE token_hash = $1',
      [hashOf(tokens.refresh_token!)],
    );
    const unused = await h.storage.db.query<{ token_hash: string }>(
      'SELECT token_hash FROM refresh_tokens WHERE family_id = $1 AND used_at IS NULL',
      [family],
    );
    expect(unused.map((r) => r.token_hash)).toEqual([hashOf(won.body.refresh_token)]);
    // the confidential app's family goes on
    await refreshRaw(app, { refresh_token: won.body.refresh_token }).expect(200);
  });

  it('rotations of several families at once each rotate (the statement they share decides each by its own row)', async () => {
    const families = await Promise.all(Array.from({ length: 6 }, () => signIn(app)));
    const answers = await Promise.all(
      families.map(({ tokens }) => refreshRaw(app, { refresh_token: tokens.refresh_token! })),
    );
    expect(answers.map((a) => a.status)).toEqual(families.map(() => 200));
    for (const [i, { tokens }] of families.entries()) {
      const rows = await h.storage.db.query<{ token_hash: string; used: boolean; access_jti: string }>(
        `SELECT token_hash, used_at IS NOT NULL AS used, access_jti FROM refresh_tokens
         WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1) ORDER BY issued_at, used_at`,
        [hashOf(tokens.refresh_token!)],
      );
      const jti = jose.decodeJwt(answers[i].body.access_token as string).jti;
      expect(rows).toEqual([
        { token_hash: hashOf(tokens.refresh_token!), used: true, access_jti: expect.any(String) },
        { token_hash: hashOf(answers[i].body.refresh_token as string), used: false, access_jti: jti },
      ]);
    }
    // and each family goes on
    await Promise.all(
      answers.map((a) => refreshRaw(app, { refresh_token: a.body.refresh_token as string }).expect(200)),
    );
  });

  it('one statement rotates several tokens: a successor is of its token’s family, none for a token used already', async () => {
    const store = refreshStore(h.storage.db);
    const [used, fresh, other] = await Promise.all([signIn(app), signIn(app), signIn(publicApp)]);
    await refreshRaw(app, { refresh_token: used.tokens.refresh_token! }).expect(200);
    const hashes = [used, fresh, other].map((f) => hashOf(f.tokens.refresh_token!));
    const next = hashes.map(() => hashOf(randomUUID()));
    const stored = await store.rotateMany(
      hashes.map((usedHash, i) => ({ usedHash, nextHash: next[i], accessJti: `jti-${i}` })),
    );
    expect(stored).toEqual(new Set([next[1], next[2]]));
    // what the family's tokens share (app, person, grant, sid, DPoP key, absolute expiry) is its row's
    const columns = 't.family_id, f.client_id, f.user_id, f.grant_data, f.sid, f.jkt, f.expires_at';
    const tokenRow = 'refresh_tokens t JOIN refresh_families f ON f.family_id = t.family_id WHERE t.token_hash = $1';
    for (const i of [1, 2]) {
      const [before] = await h.storage.db.query(`SELECT ${columns}, t.used_at FROM ${tokenRow}`, [hashes[i]]);
      const [after] = await h.storage.db.query(`SELECT ${columns}, t.access_jti, t.used_at FROM ${tokenRow}`, [
        next[i],
      ]);
      expect(before.used_at).toBeInstanceOf(Date);
      expect(after).toEqual({ ...before, access_jti: `jti-${i}`, used_at: null });
    }
    expect(await h.storage.db.query('SELECT 1 FROM refresh_tokens WHERE token_hash = $1', [next[0]])).toEqual([]);
    // one token alone (its own statement): used once, then never again
    const lone = hashOf(randomUUID());
    expect(await store.rotateMany([{ usedHash: next[1], nextHash: lone, accessJti: 'jti-lone' }])).toEqual(
      new Set([lone]),
    );
    expect(await store.rotateMany([{ usedHash: next[1], nextHash: hashOf(randomUUID()), accessJti: 'x' }])).toEqual(
      new Set(),
    );
  });

  it('a token the process remembers answers as its stored row says: gone elsewhere, used elsewhere', async () => {
    const gone = await refreshRaw(app, { refresh_token: (await signIn(app)).tokens.refresh_token! }).expect(200);
    // its family ended by another replica: no row; a widening scope does not get invalid_scope first
    await h.storage.db.query('DELETE FROM refresh_tokens WHERE token_hash = $1', [hashOf(gone.body.refresh_token)]);
    const refused = await refreshRaw(app, { refresh_token: gone.body.refresh_token, scope: 'openid email' }).expect(
      400,
    );
    expect(refused.body).toMatchObject({ error: 'invalid_grant', error_description: 'Invalid refresh token.' });

    // a public client's token used at another replica: a reuse, and the family ends
    const { tokens } = await signIn(publicApp);
    const next = await refreshRaw(publicApp, { refresh_token: tokens.refresh_token! }).expect(200);
    await h.storage.db.query('UPDATE refresh_tokens SET used_at = now() WHERE token_hash = $1', [
      hashOf(next.body.refresh_token),
    ]);
    const reused = await refreshRaw(publicApp, { refresh_token: next.body.refresh_token }).expect(400);
    expect(reused.body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'This refresh token was used already.',
    });
    const left = await h.storage.db.query('SELECT 1 FROM refresh_tokens WHERE token_hash = ANY($1)', [
      [hashOf(tokens.refresh_token!), hashOf(next.body.refresh_token)],
    ]);
    expect(left).toEqual([]);
  });

  it('narrows scope, never widens it (invalid_scope)', async () => {
    const { tokens } = await signIn(app);
    const narrow = await refreshRaw(app, { refresh_token: tokens.refresh_token!, scope: 'openid' }).expect(200);
    expect(narrow.body.scope).toBe('openid');
    expect(jose.decodeJwt(narrow.body.access_token).scope).toBe('openid');
    const wide = await refreshRaw(app, { refresh_token: narrow.body.refresh_token, scope: 'openid email' }).expect(400);
    expect(wide.body.error).toBe('invalid_scope');
    // the next token of the family still holds the whole grant
    const whole = await refreshRaw(app, { refresh_token: narrow.body.refresh_token }).expect(200);
    expect(whole.body.scope).toBe('openid profile');
  });

  it('keeps a resource grant to its resource: aud stays, scope narrows, another resource is invalid_target', async () => {
    const { tokens } = await signIn(app, { scope: 'openid offline_access tools:read tools:write', resource: TOOLS });
    expect(jose.decodeJwt(tokens.access_token).aud).toBe(TOOLS);
    const narrow = await refreshRaw(app, {
      refresh_token: tokens.refresh_token!,
      resource: TOOLS,
      scope: 'tools:read',
    }).expect(200);
    expect(jose.decodeJwt(narrow.body.access_token)).toMatchObject({ aud: TOOLS, scope: 'tools:read' });
    const other = await refreshRaw(app, {
      refresh_token: narrow.body.refresh_token,
      resource: 'https://other.example.com/',
    }).expect(400);
    expect(other.body.error).toBe('invalid_target');
    const plain = await signIn(app);
    const widened = await refreshRaw(app, { refresh_token: plain.tokens.refresh_token!, resource: TOOLS }).expect(400);
    expect(widened.body.error).toBe('invalid_target');
  });

  it('binds to the DPoP key of the exchange: no proof or another key’s is refused', async () => {
    const key = await oidc.randomDPoPKeyPair('ES256');
    const dpop = oidc.getDPoPHandle(await configFor(publicApp), key);
    const { config, tokens } = await signIn(publicApp, {}, { DPoP: dpop });
    expect(tokens.token_type).toBe('dpop');
    const unbound = await refreshRaw(publicApp, { refresh_token: tokens.refresh_token! }).expect(400);
    expect(unbound.body.error).toBe('invalid_dpop_proof');
    const otherKey = await oidc.randomDPoPKeyPair('ES256');
    const otherProof = await new jose.SignJWT({ htm: 'POST', htu: `${issuer}/token`, jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await jose.exportJWK(otherKey.publicKey) })
      .setIssuedAt()
      .sign(otherKey.privateKey);
    const wrong = await refreshRaw(publicApp, { refresh_token: tokens.refresh_token! }).set('DPoP', otherProof);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_dpop_proof');
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: dpop });
    expect(refreshed.token_type).toBe('dpop');
    expect((jose.decodeJwt(refreshed.access_token) as { cnf?: { jkt: string } }).cnf?.jkt).toBe(
      await jose.calculateJwkThumbprint(await jose.exportJWK(key.publicKey)),
    );
  });

  it('ends with a sign-out of its session (an operator, a password reset) and with a withdrawn consent', async () => {
    const one = await signIn(app);
    await admin('delete', `/admin/users/${user.user_id}/sessions`).expect(200);
    expect(await oauthError(oidc.refreshTokenGrant(one.config, one.tokens.refresh_token!))).toBe('invalid_grant');
    const two = await signIn(app);
    await admin('post', `/admin/users/${user.user_id}/reset-password`).send({ password: user.password }).expect(200);
    expect(await oauthError(oidc.refreshTokenGrant(two.config, two.tokens.refresh_token!))).toBe('invalid_grant');
    const three = await signIn(app);
    await admin('delete', `/admin/users/${user.user_id}/consents/${app.app_id}`).expect(204);
    expect(await oauthError(oidc.refreshTokenGrant(three.config, three.tokens.refresh_token!))).toBe('invalid_grant');
    const rows = await h.storage.db.query(
      'SELECT 1 FROM refresh_families f JOIN refresh_tokens t ON t.family_id = f.family_id WHERE f.client_id = $1',
      [app.app_id],
    );
    expect(rows).toEqual([]);
    expect(await h.storage.db.query('SELECT 1 FROM refresh_families WHERE client_id = $1', [app.app_id])).toEqual([]);
  });

  it('ends with its app disabled (as its access tokens do), and after its absolute lifetime', async () => {
    const { config, tokens } = await signIn(publicApp);
    await admin('post', `/admin/apps/${publicApp.app_id}/disable`).expect(200);
    const disabled = await refreshRaw(publicApp, { refresh_token: tokens.refresh_token! });
    expect(disabled.status).toBe(401);
    expect(disabled.body.error).toBe('invalid_client');
    await admin('post', `/admin/apps/${publicApp.app_id}/enable`).expect(200);
    const next = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    clock += 3601 * 1000;
    try {
      const expired = await refreshRaw(publicApp, { refresh_token: next.refresh_token! }).expect(400);
      expect(expired.body).toMatchObject({
        error: 'invalid_grant',
        error_description: 'This refresh token has expired.',
      });
    } finally {
      clock = 0;
    }
  });
});
