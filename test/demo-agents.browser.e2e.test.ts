import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startService, type RunningService } from '@attest/common';
import { CHROMIUM, launchChromium, submitSignIn } from '../packages/common/test/support/chromium';
import { describeNeeding } from '../packages/common/test/support/binaries';
import { freePort, testLogger } from '../packages/common/test/support';
import { identityService } from '../services/identity/src/main';
import { expectAccessible } from '../services/identity/test/axe';
import { startDemo, type RunningDemo } from '../apps/demo/src/demo';

const ADMIN_TOKEN = 'demo-agents-browser-admin-token-0123456789';
const PASSWORD = 'correct horse battery';

jest.setTimeout(180_000);

/**
 * Issue 42's agents section of the demo app in headless Chromium, as a person uses it: they let the demo's
 * agent act for them (consent), see the exchanged token's act, aud and scope; the agent asks for a payment,
 * the demo's link takes them to their account page, a passkey (a virtual authenticator that verifies the
 * user) approves it, and the demo page, reloading itself, shows what was approved. Ending the agent on the
 * account page stops its next exchange.
 */
describeNeeding([CHROMIUM], 'the demo app’s agents section in Chromium', () => {
  let identity: RunningService;
  let demo: RunningDemo;
  let issuer: string;
  let browser: Browser;
  const dirs: string[] = [];
  const tmp = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-demo-agents-browser-'));
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
    const created = await fetch(`${identity.adminUrl}/admin/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'noor', password: PASSWORD, verification_level: 'orb' }),
    });
    expect(created.status).toBe(201);
    demo = await startDemo({
      issuer,
      adminUrl: identity.adminUrl,
      adminToken: ADMIN_TOKEN,
      port: demoPort,
      dataDir: tmp(),
      logger: testLogger,
    });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await demo?.stop();
    await identity?.stop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A tab with a platform authenticator that verifies its user (PIN or biometric, simulated). */
  async function pageWithAuthenticator(): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    return page;
  }

  it('delegates to the demo’s agent, approves its payment with a passkey, and ends it on the account page', async () => {
    const page = await pageWithAuthenticator();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });

    // signed in to the demo with the password; a passkey added on the account page
    await page.goto(demo.url);
    await page.click('#signin');
    await submitSignIn(page, 'noor', PASSWORD);
    await page.click('button[name=decision][value=approve]');
    await page.waitForSelector('#claims');
    await page.goto(`${issuer}/account`);
    await page.fill('#passkey-name', 'this laptop');
    await page.click('#passkey-add');
    await page.waitForURL(`${issuer}/account?notice=passkey-added`);

    // delegation: consent to the trips API for the agent, then the exchange with a narrowed scope
    await page.goto(demo.url);
    await expectAccessible(page);
    await page.click('#agent-authorize');
    await page.waitForSelector('button[name=decision][value=approve]');
    expect(await page.textContent('main')).toContain('trips');
    await page.click('button[name=decision][value=approve]');
    await page.waitForSelector('#agent-granted');
    await page.selectOption('#exchange-scope', 'trips:read');
    await page.click('#agent-exchange');
    await page.waitForSelector('#delegated');
    expect(JSON.parse((await page.textContent('#delegated-act'))!)).toEqual({ sub: demo.appId });
    expect(await page.textContent('#delegated-aud')).toBe(`${demo.url}/trips`);
    expect(await page.textContent('#delegated-scope')).toBe('trips:read');
    await expectAccessible(page);

    // approval: the agent asks; the demo links to the account page, where the passkey approves
    await page.click('#ask-payment');
    await page.waitForSelector('#payment-state[data-state=pending]');
    const binding = (await page.textContent('#payment-binding'))!;
    const reference = /TRIP-[0-9]{4}/.exec((await page.textContent('#payment-detail'))!)![0];
    await expectAccessible(page);
    await page.click('#approve-link');
    await page.waitForURL(`${issuer}/account#approvals`);
    const item = page.locator('li[data-approval]');
    expect(await item.locator('[data-binding-message]').textContent()).toBe(binding);
    expect(await item.locator('li[data-detail-type=payment]').textContent()).toBe(
      `Pay 42.50 EUR to Demo Travel (reference: ${reference})`,
    );
    await item.locator('[data-approve-passkey]').click();
    await page.waitForURL(`${issuer}/account?approval=approved#approvals`);

    // back on the demo: "check again" until its agent's poll (every few seconds) has the tokens
    await page.goto(`${demo.url}/#agents`);
    for (let i = 0; i < 60 && (await page.locator('#payment-state[data-state=pending]').count()) > 0; i++) {
      await page.waitForTimeout(500);
      await page.click('#payment-refresh');
    }
    await page.waitForSelector('#payment-state[data-state=approved]');
    expect(JSON.parse((await page.textContent('#payment-approved'))!)).toEqual([
      { type: 'payment', amount: '42.50', currency: 'EUR', payee: 'Demo Travel', reference },
    ]);
    expect(await page.textContent('#payment-acr')).toBe('urn:attest:loa:orb');
    await expectAccessible(page);

    // the person ends the agent on the account page: its next exchange of their token is refused
    await page.goto(`${issuer}/account#agents`);
    await page.click(`li[data-agent="${demo.appId}"] button`);
    await page.waitForSelector(`li[data-agent="${demo.appId}"]`, { state: 'detached' });
    await page.goto(demo.url);
    await page.selectOption('#exchange-scope', 'trips:read');
    await page.click('#agent-exchange');
    await page.waitForSelector('#agents-error');
    expect(await page.textContent('#agents-error')).toMatch(/^The exchange was refused: invalid_grant: /);
    expect(await page.locator('#delegated').count()).toBe(0);

    expect(violations).toEqual([]);
    await page.context().close();
  });
});
