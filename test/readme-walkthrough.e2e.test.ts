import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser as Chromium } from 'playwright-core';
import { CHROMIUM, launchChromium, submitSignIn } from '../packages/common/test/support/chromium';
import { Browser } from '../services/identity/test/browser';
import { describeNeeding, freePort } from '../packages/common/test/support';
import { ROOT, stackEnv, startStack, type Stack } from './support';
import { markedBlock, markedTableCommands } from './readme-blocks';

/**
 * The README's walk-through, run as written: the shell blocks marked `<!-- walkthrough… -->` and the
 * curl of each row of its "one request per public API" table, against `pnpm start`'s program on ports
 * and a data directory of its own (the blocks read BASE_URL, API_URL, PRICES_URL, APP_URL and SPA_URL).
 */
type Json = Record<string, unknown>;
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const ALICE = { username: 'alice', password: 'correct horse battery' };
/** What the walk-through leaves in the user's shell, for the blocks that continue in it. */
const SHELL_VARIABLES = ['IDENTITY', 'API', 'PRICES', 'SHOP', 'APP', 'SECRET', 'API_KEY', 'TX'];

interface Shell {
  child: ChildProcess;
  /** stdout and stderr, as they came */
  output(): string;
  stdout(): string;
  exited: Promise<number | null>;
}

/** `bash -euo pipefail` running `script` in the repository root, in a process group of its own. */
function bash(script: string, env: NodeJS.ProcessEnv): Shell {
  // stdin not a socket: bash would take itself for a remote shell and read bashrc
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  child.stdout!.on('data', (d) => ((output += d), (stdout += d)));
  child.stderr!.on('data', (d) => (output += d));
  // 'close', not 'exit': output can still be in the pipes when the process has exited
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, output: () => output, stdout: () => stdout, exited };
}

async function stopShell(shell: Shell): Promise<void> {
  if (shell.child.exitCode === null && shell.child.signalCode === null) {
    try {
      process.kill(-shell.child.pid!, 'SIGTERM'); // the group: bash and the example it started
    } catch {
      // already gone
    }
  }
  await shell.exited;
}

async function waitFor(shell: Shell, marker: string): Promise<void> {
  for (let i = 0; i < 600 && !shell.output().includes(marker); i++) {
    if (shell.child.exitCode !== null) throw new Error(`the block exited: ${shell.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!shell.output().includes(marker)) throw new Error(`the block did not print "${marker}": ${shell.output()}`);
}

/** The JSON documents a block printed, one after the other (jq's pretty output). */
function jsonDocuments(text: string): Json[] {
  const slurped = spawnSync('jq', ['-cs', '.'], { input: text, encoding: 'utf8' });
  if (slurped.status !== 0) throw new Error(`the output is not a series of JSON documents: ${text}`);
  return JSON.parse(slurped.stdout) as Json[];
}

describeNeeding(['bash', 'curl', 'jq'], 'the README walk-through against pnpm start', () => {
  let stack: Stack;
  let env: NodeJS.ProcessEnv;
  let shopPort: number;
  let printed: Json[];
  const vars: Record<string, string> = {};
  let varsFile: string;
  const shells: Shell[] = [];
  /** Runs a block in the shell the walk-through left: its variables first. */
  const continueIn = (block: string, extra: NodeJS.ProcessEnv = {}) => {
    const shell = bash(`source ${JSON.stringify(varsFile)}\n${block}`, { ...env, ...extra });
    shells.push(shell);
    return shell;
  };

  beforeAll(async () => {
    // a loaded machine may need minutes to start three services on embedded Postgres
    stack = await startStack(await stackEnv(), 400000);
    shopPort = await freePort();
    varsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attest-walkthrough-')), 'vars.sh');
    env = { ...stack.env, APP_URL: `http://localhost:${shopPort}` };
    const walkthrough = bash(
      `${markedBlock(README, 'walkthrough')}\ndeclare -p ${SHELL_VARIABLES.join(' ')} > ${JSON.stringify(varsFile)}`,
      env,
    );
    const code = await walkthrough.exited;
    if (code !== 0) throw new Error(`the walk-through failed (exit ${code}):\n${walkthrough.output()}`);
    printed = jsonDocuments(walkthrough.stdout());
    const read = bash(
      `source ${JSON.stringify(varsFile)}; printf '%s\\n' ${SHELL_VARIABLES.map((v) => `"$${v}"`).join(' ')}`,
      env,
    );
    await read.exited;
    read
      .stdout()
      .trim()
      .split('\n')
      .forEach((value, i) => (vars[SHELL_VARIABLES[i]] = value));
  }, 500000);

  afterAll(async () => {
    await Promise.all(shells.map(stopShell));
    await stack?.stop();
  }, 60000);

  it('creates an app, a key and a user, records and checks a payment, sets and reads a price, reads discovery', () => {
    const { identity, transactions, prices } = stack.urls;
    expect(vars).toMatchObject({ IDENTITY: identity, API: transactions, PRICES: prices, SHOP: env.APP_URL });
    expect(vars.TX).toMatch(/^0x[0-9a-f]{64}$/);
    expect(vars.API_KEY).toMatch(/^api_/);
    const [app, user, address, pending, statusChange, mined, priceSet, priceAnswer, discovery, ...rest] = printed;
    expect(rest).toEqual([]);
    expect(app).toEqual({
      app_id: vars.APP,
      client_secret: vars.SECRET,
      api_key: expect.stringMatching(/^api_/),
      redirect_uris: [`${env.APP_URL}/callback`],
    });
    expect(vars.APP).toMatch(/^app_[0-9a-f]{32}$/);
    expect(app.api_key).not.toBe(vars.API_KEY); // step 2 made a second key, and the lookups used it
    // the shop's receiving address, added before the payment to it is recorded (issue 40, item 1)
    expect(address).toEqual({
      app_id: vars.APP,
      chain: 'worldchain',
      address: '0x2222222222222222222222222222222222222222',
      proof: 'operator',
      created_at: expect.any(String),
    });
    expect(user).toMatchObject({
      user_id: expect.stringMatching(/^usr_/),
      username: 'alice',
      verification_level: 'orb',
    });
    expect(pending).toEqual({
      reference: 'order-1',
      transaction_hash: '0x5f1c3a0e9d6b4c2a8e7f0b1d3c5a7e9f2b4d6c8a0e1f3b5d7c9a2e4f6b8d0c1a',
      transaction_status: 'pending',
      from: '0x1111111111111111111111111111111111111111',
      chain: 'worldchain',
      timestamp: expect.any(String),
      token_amount: '1500000',
      token: 'USDCE',
      to: '0x2222222222222222222222222222222222222222',
      app_id: vars.APP,
    });
    expect(statusChange).toEqual({ transaction_id: vars.TX, transaction_status: 'mined' });
    expect(mined).toEqual({
      reference: 'order-1',
      transaction_status: 'mined',
      token: 'USDCE',
      token_amount: '1500000',
    });
    expect(priceSet).toEqual({ token: 'WLD', fiat: 'USD', amount: '1510763', decimals: 6 });
    const answer = (priceAnswer as { result: { prices: Record<string, Record<string, Json>> } }).result.prices;
    expect(answer.WLD.USD).toEqual({ asset: 'USD', amount: '1510763', decimals: 6, symbol: 'USD' });
    expect(Object.keys(answer).sort()).toEqual(['USDCE', 'WLD']);
    expect(Object.keys(answer.USDCE).sort()).toEqual(['EUR', 'USD']);
    expect(answer.WLD.EUR).toMatchObject({ asset: 'EUR', decimals: 6, amount: expect.stringMatching(/^\d+$/) });
    expect(discovery).toEqual({
      issuer: identity,
      authorization_endpoint: `${identity}/authorize`,
      token_endpoint: `${identity}/token`,
      userinfo_endpoint: `${identity}/userinfo`,
      end_session_endpoint: `${identity}/logout`,
    });
  });

  it('made alice, created by the walk-through with pnpm manage, the owner of the demo app (DEMO_OWNER_USERNAME)', async () => {
    const dataDir = stack.env.DATA_DIR!;
    const adminToken = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo', 'client.json'), 'utf8')) as { app_id: string };
    const res = await fetch(`http://127.0.0.1:${stack.env.IDENTITY_ADMIN_PORT}/admin/apps/${demo.app_id}/members`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(res.status).toBe(200);
    const members = (await res.json()) as { username: string; role: string }[];
    expect(members.map((m) => [m.username, m.role])).toEqual([['alice', 'owner']]);
    // the walk-through's own app is the operator's: nobody was put on its team
    const shop = await fetch(`http://127.0.0.1:${stack.env.IDENTITY_ADMIN_PORT}/admin/apps/${vars.APP}/members`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(await shop.json()).toEqual([]);
  });

  it('server-side sign-in: the express-signin block signs alice in with the app the walk-through made, and out of Attest', async () => {
    const shell = continueIn(markedBlock(README, 'walkthrough: express-signin'), { PORT: String(shopPort) });
    await waitFor(shell, 'listening');
    const rp = new Browser(env.APP_URL!);
    const login = await rp.request('/login');
    expect(login.status).toBe(302);
    const idp = new Browser(stack.urls.identity);
    const { location } = await idp.signIn(login.headers.get('location')!, ALICE);
    expect(location).toMatch(new RegExp(`^${env.APP_URL}/callback\\?code=`));
    expect((await rp.request(location!)).status).toBe(302);
    const home = await (await rp.request('/')).text();
    expect(home).toContain('verification level: orb');
    expect(home).toMatch(/sub: 0x[0-9a-f]{64}/);
    expect(home).toContain('&#34;name&#34;: &#34;Alice&#34;');

    // Sign out, as the page offers it: the example sends alice to Attest's end_session_endpoint with the
    // post_logout_redirect_uri the walk-through registered, Attest ends her session and sends her back
    const signOut = await rp.request('/logout', { method: 'POST', form: {} });
    expect(signOut.status).toBe(302);
    const endSession = new URL(signOut.headers.get('location')!);
    expect(`${endSession.origin}${endSession.pathname}`).toBe(`${stack.urls.identity}/logout`);
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${env.APP_URL}/`);
    const loggedOut = await idp.request(endSession.toString());
    expect({ status: loggedOut.status, location: loggedOut.headers.get('location') }).toEqual({
      status: 302,
      location: `${env.APP_URL}/`,
    });
    expect(await (await rp.request(loggedOut.headers.get('location')!)).text()).toContain('Sign in with Attest');
    // the Attest session is over: the next sign-in asks for the password again instead of returning a code
    const again = await rp.request('/login');
    let next = await idp.request(again.headers.get('location')!);
    for (let hops = 0; next.status >= 300 && next.status < 400 && hops < 5; hops++) {
      const to = new URL(next.headers.get('location')!, stack.urls.identity).toString();
      expect(to.startsWith(stack.urls.identity)).toBe(true); // never back to the app with a code
      next = await idp.request(to);
    }
    expect(next.status).toBe(200);
    expect(await next.text()).toContain('name="password"');
    await stopShell(shell);
  }, 120000);

  it('one request per public API: every curl of the table answers, with the walk-through’s values', async () => {
    // the access token an app gets at sign-in: the walk-through's app, alice, code + PKCE
    const oidc = await import('openid-client');
    const config = await oidc.discovery(
      new URL(vars.IDENTITY),
      vars.APP,
      undefined,
      oidc.ClientSecretBasic(vars.SECRET),
      { execute: [oidc.allowInsecureRequests] },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${vars.SHOP}/callback`,
      scope: 'openid profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const { location } = await new Browser(vars.IDENTITY).signIn(url.toString(), ALICE);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(location!), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });

    const expectations: Record<string, (output: string) => void> = {
      'sign-in discovery': (o) => expect(JSON.parse(o)).toMatchObject({ issuer: vars.IDENTITY }),
      'signing keys': (o) =>
        expect((JSON.parse(o) as { keys: Json[] }).keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' }),
      'user info': (o) =>
        expect(JSON.parse(o)).toMatchObject({
          sub: expect.stringMatching(/^0x[0-9a-f]{64}$/),
          [`${vars.IDENTITY}/v1`]: { verification_level: 'orb' },
          name: 'Alice',
        }),
      'token check by the app': (o) => expect(JSON.parse(o)).toMatchObject({ active: true, client_id: vars.APP }),
      'look a payment up': (o) =>
        expect(JSON.parse(o)).toMatchObject({ reference: 'order-1', transaction_status: 'mined', app_id: vars.APP }),
      prices: (o) =>
        expect((JSON.parse(o) as { result: { prices: Record<string, Json> } }).result.prices.WLD.USD).toMatchObject({
          amount: '1510763',
          decimals: 6,
        }),
      "the price widget's script": (o) => {
        expect(o).toMatch(/^HTTP\/1\.1 200/);
        expect(o).toMatch(/content-type: (text|application)\/javascript/i);
      },
    };
    const rows = markedTableCommands(README, 'walkthrough: one request per API');
    expect(rows.map((r) => r.label).sort()).toEqual(Object.keys(expectations).sort());
    for (const { label, command } of rows) {
      // curl fails on an HTTP error here; the README's text runs unchanged
      const shell = continueIn(`curl() { command curl -fsS "$@"; }\n${command}`, {
        ACCESS_TOKEN: tokens.access_token,
      });
      const code = await shell.exited;
      if (code !== 0) throw new Error(`${label}: ${command} failed (exit ${code}): ${shell.output()}`);
      expectations[label](shell.stdout());
    }
  }, 120000);

  describeNeeding([CHROMIUM], 'in headless Chromium', () => {
    let browser: Chromium;
    beforeAll(async () => {
      browser = await launchChromium();
    }, 60000);
    afterAll(() => browser?.close());

    it('single-page sign-in: the spa-signin block makes a public app and signs alice in without a secret', async () => {
      const port = await freePort();
      const origin = `http://localhost:${port}`;
      const shell = continueIn(markedBlock(README, 'walkthrough: spa-signin'), {
        SPA_URL: origin,
        PORT: String(port),
      });
      await waitFor(shell, 'listening');
      const page = await browser.newPage();
      try {
        await page.goto(origin);
        await page.waitForSelector('#login:not([hidden])', { timeout: 30000 });
        await page.click('#login');
        await submitSignIn(page, ALICE.username, ALICE.password);
        await page.click('button[name=decision][value=approve]');
        // null-safe: the predicate also runs on the consent page, before the redirect back to the app's page
        await page.waitForFunction(
          "document.getElementById('status')?.textContent.startsWith('Signed in')",
          undefined,
          {
            timeout: 30000,
          },
        );
        expect(await page.textContent('#status')).toMatch(/^Signed in: 0x[0-9a-f]{64} \(verification level orb\)$/);
      } finally {
        await page.close();
        await stopShell(shell);
      }
    }, 120000);
  });
});
