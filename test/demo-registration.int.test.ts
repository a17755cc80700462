import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { ensureDemoClient, ensureDemoResource } from '../apps/demo/src/registration';
import { ADMIN_TOKEN, identityHarness, type IdentityHarness } from '../services/identity/test/support';

const URIS = {
  redirectUri: 'http://localhost:4003/callback',
  postLogoutRedirectUri: 'http://localhost:4003/signed-out',
};

/** The demo's registration against a real identity admin API: first start, restart, and a registration from before sign-out. */
describe('demo app registration', () => {
  let h: IdentityHarness;
  let server: http.Server;
  let admin: { adminUrl: string; adminToken: string };
  const dataDirs: string[] = [];
  const dataDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-demo-'));
    dataDirs.push(dir);
    return dir;
  };
  const app = async (id: string) =>
    (await request(h.adminApp).get(`/admin/apps/${id}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`)).body as {
      redirect_uris: string[];
      post_logout_redirect_uris: string[];
      backchannel_token_delivery_mode: string | null;
    };

  beforeAll(async () => {
    h = await identityHarness();
    server = http.createServer(h.adminApp);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    admin = { adminUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, adminToken: ADMIN_TOKEN };
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await h.close();
    for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('registers once with its callback and post-logout redirect URI, and reuses the registration on restart', async () => {
    const dir = dataDir();
    const first = await ensureDemoClient(admin, dir, URIS);
    expect(await app(first.app_id)).toMatchObject({
      redirect_uris: [URIS.redirectUri],
      post_logout_redirect_uris: [URIS.postLogoutRedirectUri],
      // its agents section asks people to approve a payment (CIBA) and polls for the answer
      backchannel_token_delivery_mode: 'poll',
    });
    expect(fs.statSync(path.join(dir, 'demo', 'client.json')).mode & 0o777).toBe(0o600);
    const again = await ensureDemoClient(admin, dir, URIS);
    expect(again).toEqual(first);
  });

  it('adds the post-logout redirect URI and CIBA poll mode to a registration made before them (PATCH, same app)', async () => {
    const dir = dataDir();
    const old = await request(h.adminApp)
      .post('/admin/apps')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({
        name: 'Attest demo',
        redirect_uris: [URIS.redirectUri],
        post_logout_redirect_uris: ['http://localhost:4003/elsewhere'],
      });
    expect(old.status).toBe(201);
    const stored = {
      app_id: old.body.app_id as string,
      client_secret: old.body.client_secret as string,
      redirect_uri: URIS.redirectUri,
    };
    fs.mkdirSync(path.join(dir, 'demo'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'demo', 'client.json'), JSON.stringify(stored));

    expect(await ensureDemoClient(admin, dir, URIS)).toEqual(stored);
    expect(await app(stored.app_id)).toMatchObject({
      post_logout_redirect_uris: ['http://localhost:4003/elsewhere', URIS.postLogoutRedirectUri],
      backchannel_token_delivery_mode: 'poll',
    });
    await ensureDemoClient(admin, dir, URIS);
    expect((await app(stored.app_id)).post_logout_redirect_uris).toHaveLength(2);
    // an owner who turned CIBA off in the portal: the next start turns poll mode on again, nothing else
    await request(h.adminApp)
      .patch(`/admin/apps/${stored.app_id}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ backchannel_token_delivery_mode: null })
      .expect(200);
    await ensureDemoClient(admin, dir, URIS);
    expect(await app(stored.app_id)).toMatchObject({
      post_logout_redirect_uris: ['http://localhost:4003/elsewhere', URIS.postLogoutRedirectUri],
      backchannel_token_delivery_mode: 'poll',
    });
  });

  it('registers its trips API as a resource once, and finds it by its uri on the next start', async () => {
    const trips = { uri: 'http://localhost:4003/trips', scopes: ['trips:read', 'trips:book'] };
    expect(await ensureDemoResource(admin, trips)).toEqual(trips);
    expect(await ensureDemoResource(admin, trips)).toEqual(trips);
    const listed = (await request(h.adminApp).get('/admin/resources').set('Authorization', `Bearer ${ADMIN_TOKEN}`))
      .body as { uri: string; name: string; scopes: string[] }[];
    expect(listed.filter((r) => r.uri === trips.uri)).toEqual([
      expect.objectContaining({ uri: trips.uri, name: 'Attest demo: trips API', scopes: trips.scopes }),
    ]);
  });
});
