import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { testLogger } from '@attest/testing';
import { BackChannelLogout } from '../src/signin/backchannel-logout';
import type { LogoutDelivery } from '../src/signin/logout-delivery-store';
import { ADMIN_TOKEN, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';

const EMBEDDED = { allowHttp: true, allowPrivate: true, allowPrivateSetting: 'BACKCHANNEL_LOGOUT_ALLOW_PRIVATE' };
const PRODUCTION = { allowHttp: false, allowPrivate: false, allowPrivateSetting: 'BACKCHANNEL_LOGOUT_ALLOW_PRIVATE' };

/** One pass of deliveries to `uri` under `targets`; what the store was told and what the receiver got. */
async function deliverOnce(
  uri: string,
  targets: typeof PRODUCTION,
  lookup?: (host: string) => Promise<{ address: string; family: number }[]>,
) {
  const failed: string[] = [];
  const delivered: string[] = [];
  const delivery: LogoutDelivery = { id: '1', appId: 'app_x', uri, sub: 's', sid: 'sid', attempts: 0 };
  const logout = new BackChannelLogout(
    {
      leaseDue: async () => [delivery],
      delivered: async (id: string) => void delivered.push(id),
      failed: async (_id: string, problem: string) => void failed.push(problem),
    },
    { logoutToken: async () => 'a.logout.token' },
    testLogger,
    { secret: 'x'.repeat(32), intervalMs: 1000, maxAttempts: 3, targets, lookup },
  );
  await logout.deliverDue();
  return { failed, delivered };
}

describe('back-channel logout through the shared outbound guard (issue 23, item 13)', () => {
  const received: string[] = [];
  const rx = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push(body);
      res.writeHead(200).end();
    });
  });
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
    port = (rx.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((r) => rx.close(r)));

  it('embedded mode: delivers to a loopback receiver over plain http', async () => {
    const before = received.length;
    const out = await deliverOnce(`http://127.0.0.1:${port}/bcl`, EMBEDDED);
    expect(out).toEqual({ failed: [], delivered: ['1'] });
    expect(received.slice(before)).toEqual(['logout_token=a.logout.token']);
  });

  it('with a database: plain http (an admin port on loopback) is refused before any connection', async () => {
    const before = received.length;
    const out = await deliverOnce(`http://127.0.0.1:${port}/bcl`, PRODUCTION);
    expect(out.delivered).toEqual([]);
    expect(out.failed[0]).toMatch(/^refused: .*must be https/);
    expect(received.length).toBe(before);
  });

  it('with a database: a host that resolves to a private, loopback or tunnelled address is refused', async () => {
    for (const address of ['10.0.0.5', '127.0.0.1', '::127.0.0.1', '64:ff9b:1::a00:5', '2002:7f00:1::', '100::1']) {
      const family = address.includes(':') ? 6 : 4;
      const out = await deliverOnce('https://logout.app.example/bcl', PRODUCTION, async () => [{ address, family }]);
      expect([address, out.failed[0]]).toEqual([
        address,
        `refused: logout.app.example resolves to a non-public address (${address}); BACKCHANNEL_LOGOUT_ALLOW_PRIVATE=true allows it`,
      ]);
    }
  });
});

describe('backchannel_logout_uri is judged when it is registered', () => {
  let production: IdentityHarness;
  let embedded: IdentityHarness;
  beforeAll(async () => {
    // a deployment with a database (the harness's storage is the test database either way)
    production = await identityHarness({ DATABASE_URL: 'postgres://db.invalid/attest' });
    embedded = await identityHarness({}, { db: production.storage.db });
  });
  afterAll(async () => {
    await embedded.close();
    await production.close();
  });

  const create = (h: IdentityHarness, uri: string) =>
    request(h.adminApp)
      .post('/admin/apps')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ name: 'Logout app', redirect_uris: [REDIRECT_URI], backchannel_logout_uri: uri });

  it('refuses private IP literals and plain http with a database, naming the field', async () => {
    for (const uri of [
      'https://10.0.0.1/bcl',
      'https://169.254.169.254/latest',
      'https://[::127.0.0.1]/bcl',
      'https://[64:ff9b:1::a00:1]/bcl',
      'https://[64:ff9b::10.0.0.1]/bcl',
      'https://[2002:a00:1::]/bcl',
      'https://[100::1]/bcl',
      'https://[::ffff:127.0.0.1]/bcl',
      'http://localhost:4100/admin',
    ]) {
      const res = await create(production, uri);
      expect([uri, res.status, res.body.code, res.body.attribute]).toEqual([
        uri,
        400,
        'invalid_parameter',
        'backchannel_logout_uri',
      ]);
      expect(res.body.detail).toMatch(/^backchannel_logout_uri must/);
    }
    const ok = await create(production, 'https://93.184.216.34/bcl');
    expect(ok.status).toBe(201);
    const patched = await request(production.adminApp)
      .patch(`/admin/apps/${ok.body.app_id}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ backchannel_logout_uri: 'https://[fd00::1]/bcl' });
    expect(patched.status).toBe(400);
    expect(patched.body).toMatchObject({ code: 'invalid_parameter', attribute: 'backchannel_logout_uri' });
    expect((await production.ctx.kernel.apps.find(ok.body.app_id))!.backchannelLogoutUri).toBe(
      'https://93.184.216.34/bcl',
    );
  });

  it('embedded mode (pnpm start) keeps http on loopback for local development', async () => {
    expect((await create(embedded, 'http://127.0.0.1:3000/bcl')).status).toBe(201);
  });
});
