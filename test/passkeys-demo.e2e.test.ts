import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../packages/common/test/support/chromium';
import { describeNeeding } from '../packages/common/test/support/binaries';
import { ROOT, stackEnv, startStack, type Stack } from './support';

const ARTIFACTS = path.join(ROOT, 'test-artifacts');

/** The demo starts once the services are ready (it registers itself with identity first). */
async function demoReady(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the demo at ${url} did not start`);
}

/** What a newcomer does with only `pnpm start` running: the demo app, a passkey, the account page. */
describeNeeding([CHROMIUM], 'the demo app in Chromium: passkey sign-up and sign-in, consent, account page', () => {
  let stack: Stack;
  let browser: Browser;
  let demo: string;
  let issuer: string;

  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    stack = await startStack(await stackEnv(), 150000);
    demo = `http://localhost:${stack.env.DEMO_PORT}`;
    await demoReady(demo);
    issuer = stack.urls.identity;
    browser = await launchChromium();
  }, 240000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  async function createUser(username: string, name: string): Promise<void> {
    const adminToken = fs.readFileSync(path.join(stack.env.DATA_DIR!, 'admin-token'), 'utf8').trim();
    const created = await fetch(`http://127.0.0.1:${stack.env.IDENTITY_ADMIN_PORT}/admin/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ username, password: 'correct horse battery', verification_level: 'orb', name }),
    });
    expect(created.status).toBe(201);
  }

  /** The demo's "Sign in" with a password, approving the demo; ends on the demo's claims. */
  async function signInWithPassword(page: Page, username: string): Promise<void> {
    await page.goto(demo);
    await page.click('#signin');
    await page.fill('#username', username);
    await page.fill('#password', 'correct horse battery');
    await page.click('form[action="/signin"]:not([data-passkey]) button[type=submit]');
    await page.click('button[name=decision][value=approve]');
    await page.waitForSelector('#claims');
  }

  /** A tab with Chromium's virtual authenticator: a platform authenticator that keeps discoverable credentials and verifies the user. */
  async function tabWithAuthenticator(): Promise<{
    context: BrowserContext;
    page: Page;
    cdp: CDPSession;
    authenticatorId: string;
  }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    });
    return { context, page, cdp, authenticatorId };
  }

  const cspViolations = (page: Page) => {
    const seen: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) seen.push(m.text());
    });
    return seen;
  };

  it('signs up with a passkey from the demo, approves, sees the claims; signs in again with the passkey alone; withdraws on the account page and is asked again', async () => {
    const { context, page, cdp, authenticatorId } = await tabWithAuthenticator();
    const violations = cspViolations(page);

    await page.goto(demo);
    await page.click('#signin');
    await page.waitForSelector('#passkey-signin', { state: 'visible' });
    expect(await page.textContent('h1')).toBe('Sign in to continue to Attest demo');
    await page.screenshot({ path: path.join(ARTIFACTS, 'signin.png'), fullPage: true });

    await page.click('#signup-link');
    await page.fill('#username', 'grace');
    await page.fill('#name', 'Grace Hopper');
    await page.click('button[type=submit]');
    await page.click('#passkey-create');
    await page.waitForSelector('button[name=decision][value=approve]');
    expect(await page.textContent('h1')).toContain('Attest demo');
    await page.screenshot({ path: path.join(ARTIFACTS, 'consent.png'), fullPage: true });
    await page.click('button[name=decision][value=approve]');

    await page.waitForSelector('#claims');
    const sub = (await page.textContent('#claim-sub'))!;
    expect(sub).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await page.textContent('#claim-level')).toBe('device');
    expect(await page.textContent('#claim-name')).toBe('Grace Hopper');
    expect(await page.textContent('#claim-email')).toBe(`${sub}@localhost`);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0].isResidentCredential).toBe(true);

    // a new browser session: no username typed, the passkey alone signs in; consent is remembered
    await context.clearCookies();
    await page.goto(demo);
    await page.click('#signin');
    await page.click('#passkey-signin');
    await page.waitForSelector('#claims');
    expect(await page.textContent('#claim-sub')).toBe(sub);

    // the account page: the demo is listed; withdrawing it means the next sign-in asks again
    await page.goto(`${issuer}/account`);
    expect(await page.textContent('#account-username')).toBe('grace');
    expect(await page.textContent('#account-level')).toBe('device');
    expect(await page.locator('li[data-app]').count()).toBe(1);
    expect(await page.locator('li[data-passkey-id]').count()).toBe(1);
    await page.screenshot({ path: path.join(ARTIFACTS, 'account.png'), fullPage: true });
    await page.click('li[data-app] button');
    expect(await page.textContent('#account-notice')).toContain('Access withdrawn');
    expect(await page.locator('li[data-app]').count()).toBe(0);

    // signing out of the demo ends the provider's session too: signing in again needs the passkey
    await page.goto(demo);
    await page.click('#signout');
    await page.waitForSelector('#signed-out');
    await page.click('#signin');
    await page.click('#passkey-signin');
    await page.waitForSelector('button[name=decision][value=deny]');
    await page.click('button[name=decision][value=deny]');
    expect(await page.textContent('#error')).toContain('access_denied');

    expect(violations).toEqual([]);
    await context.close();
  });

  it('signs in with a password (an operator-made account at level orb) through the demo', async () => {
    await createUser('ada', 'Ada Lovelace');
    const context = await browser.newContext();
    const page = await context.newPage();
    await signInWithPassword(page, 'ada');
    expect(await page.textContent('#claim-level')).toBe('orb');
    expect(await page.textContent('#claim-name')).toBe('Ada Lovelace');
    await context.close();
  });

  it('signs out through the demo (RP-initiated logout): back on the demo signed out, and prompt=none then gets login_required', async () => {
    await createUser('lin', 'Lin Yutang');
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations = cspViolations(page);
    await signInWithPassword(page, 'lin');
    // signed in at the provider: a silent check (prompt=none) succeeds without a page
    await page.goto(`${demo}/login?prompt=none`);
    await page.waitForSelector('#claims');

    const visited: string[] = [];
    page.on('request', (r) => {
      if (r.isNavigationRequest()) visited.push(r.url());
    });
    await page.click('#signout');
    await page.waitForSelector('#signed-out');
    expect(new URL(page.url()).origin).toBe(new URL(demo).origin);
    const end = new URL(visited.find((u) => u.startsWith(`${issuer}/logout`))!);
    expect(end.searchParams.get('id_token_hint')).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(end.searchParams.get('post_logout_redirect_uri')).toBe(`${demo}/signed-out`);
    expect(await page.locator('#claims').count()).toBe(0);

    // the provider's session has ended: the next prompt=none comes back with login_required
    await page.click('#silent');
    await page.waitForSelector('#error');
    expect(await page.textContent('#error')).toContain('login_required');
    expect(await page.locator('#claims').count()).toBe(0);
    // and the account page asks for a sign-in
    await page.goto(`${issuer}/account`);
    expect(new URL(page.url()).pathname).toBe('/signin');

    expect(violations).toEqual([]);
    await context.close();
  });
});
