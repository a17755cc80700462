import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService, type RunningService } from '@attest/common';
import { freePort, testLogger } from '../packages/common/test/support';
import { identityService } from '../services/identity/src/main';
import { Browser } from '../services/identity/test/browser';
import { startDemo, type RunningDemo } from '../apps/demo/src/demo';

const ADMIN_TOKEN = 'demo-acr-admin-token-0123456789abcdef';
const PASSWORD = 'correct horse battery';

/** The demo app's "orb-verified people only" toggle (issue 24), against a running provider. */
describe('demo app: asking for orb with a toggle', () => {
  let identity: RunningService;
  let demo: RunningDemo;
  let issuer: string;
  const dirs: string[] = [];
  const tmp = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-demo-acr-'));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    const [port, adminPort, demoPort] = [await freePort(), await freePort(), await freePort()];
    issuer = `http://localhost:${port}`;
    identity = await startService(
      identityService,
      identityService.loadConfig({
        IDENTITY_PORT: String(port),
        IDENTITY_ADMIN_PORT: String(adminPort),
        BASE_URL: issuer,
        DATA_DIR: tmp(),
        ADMIN_TOKEN,
        LOG_LEVEL: 'silent',
      }),
    );
    for (const [username, level] of [
      ['orla', 'orb'],
      ['dev', 'device'],
    ])
      await fetch(`${identity.adminUrl}/admin/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ username, password: PASSWORD, verification_level: level }),
      });
    demo = await startDemo({
      issuer,
      adminUrl: identity.adminUrl,
      adminToken: ADMIN_TOKEN,
      port: demoPort,
      dataDir: tmp(),
      logger: testLogger,
    });
  }, 60000);
  afterAll(async () => {
    await demo?.stop();
    await identity?.stop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  const signIn = async (username: string, query: string) => {
    const rp = new Browser(demo.url);
    const login = await rp.request(`/login${query}`);
    expect(login.status).toBe(303);
    const result = await new Browser(issuer).signIn(login.headers.get('location')!, { username, password: PASSWORD });
    return { rp, login: new URL(login.headers.get('location')!), ...result };
  };

  it('shows the toggle; with it on, an orb-verified person signs in with acr orb', async () => {
    const home = await (await new Browser(demo.url).request('/')).text();
    expect(home).toContain('id="require-orb" name="level" value="orb"');
    const { rp, login, location } = await signIn('orla', '?level=orb');
    expect(JSON.parse(login.searchParams.get('claims')!)).toEqual({
      id_token: { acr: { essential: true, values: ['urn:attest:loa:orb'] } },
    });
    expect((await rp.request(location!)).status).toBe(303);
    expect(await (await rp.request('/')).text()).toContain('<dd id="claim-acr">urn:attest:loa:orb</dd>');
  });

  it('with it on, a device-level person gets the provider’s page and the demo shows unmet_authentication_requirements', async () => {
    const { rp, refusal } = await signIn('dev', '?level=orb');
    expect(refusal!.status).toBe(403);
    const back = await (await rp.request(refusal!.backToApp)).text();
    expect(back).toContain('unmet_authentication_requirements');
  });

  it('with it off, the same person signs in at the level they have', async () => {
    const { login, location } = await signIn('dev', '');
    expect(login.searchParams.has('claims')).toBe(false);
    expect(location).toMatch(/\/callback\?code=/);
  });
});
