import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, launchChromium, submitSignIn } from '../../../packages/common/test/support/chromium';
import request from 'supertest';
import { freePort } from '@attest/testing';
import { describeNeeding } from '../../../packages/common/test/support/binaries';
import { receiveAt, transactionsHarness, type TransactionsHarness } from '../../transactions/test/support';
import { WebhookReceiver } from '../../transactions/test/support/webhook-receiver';
import { expectAccessible } from './axe';
import { ADMIN_TOKEN, identityHarness, type IdentityHarness } from './support';

/**
 * The developer portal in a real browser (issue 27): a team owner signs in with Attest itself
 * (/portal/signin → /authorize → the sign-in page → consent → /portal/callback), creates an app, adds a
 * redirect URI, creates an API key and sees it once; a viewer is offered no form and the server refuses
 * their forged request; a member of another app sees nothing of this one. The owner adds a webhook with an
 * event filter, sends a test event to a receiver on loopback and sees its delivery in the log, and finds a
 * payment its backend recorded with the API key by reference. Every page passes axe-core with
 * no serious or critical violation. The screenshots of docs/portal.md are taken here.
 * Issue 40, item 13: a value shown once (client secret, API key, signing secret) is visible whole at 1280 px,
 * selected whole by one click and copied by its button; webhook event types are ticked from the known list;
 * the delivery log shows each attempt's status, duration and bodies; the app's settings are sub-pages
 * (settings, security, team, danger zone), each loading and its form landing back on it.
 */
const SCREENSHOTS = path.join(__dirname, '..', '..', '..', 'docs', 'portal');
const PASSWORD = 'correct horse battery';
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

const listen = (app: http.RequestListener, port = 0) =>
  new Promise<http.Server>((resolve) => {
    const server = http.createServer(app).listen(port, '127.0.0.1', () => resolve(server));
  });
const close = (server: http.Server) => {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
};

// each test signs in, runs axe on several pages and takes screenshots: more than the default 60 s on a
// loaded two-core machine
jest.setTimeout(180_000);

describeNeeding([CHROMIUM], 'the developer portal in Chromium', () => {
  let h: IdentityHarness;
  let tx: TransactionsHarness;
  let servers: http.Server[];
  let browser: Browser;
  let origin: string;
  let otherApp: { app_id: string };
  /** The app the owner creates in the portal, and the API key made for it there. */
  let appId = '';
  let apiKey = '';
  let webhookId = '';
  let receiver: WebhookReceiver;

  const admin = (method: 'post' | 'put', route: string) =>
    request(h.adminApp)[method](`/admin${route}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    tx = await transactionsHarness({ WEBHOOK_POLL_INTERVAL_MS: '100', WEBHOOK_ALLOW_PRIVATE: 'true' });
    receiver = await new WebhookReceiver().start();
    const txServer = await listen(tx.adminApp);
    const port = await freePort();
    origin = `http://localhost:${port}`;
    h = await identityHarness({
      BASE_URL: origin,
      PORTAL_INTERNAL_URL: `http://127.0.0.1:${port}`,
      TRANSACTIONS_ADMIN_URL: `http://127.0.0.1:${(txServer.address() as AddressInfo).port}`,
      TRANSACTIONS_ADMIN_TOKEN: ADMIN_TOKEN,
      PORTAL_SELF_SERVICE_APPS: 'true',
    });
    servers = [txServer, await listen(h.publicApp, port)];
    for (const [username, name] of [
      ['alice', 'Alice Example'],
      ['victor', 'Victor Viewer'],
      ['oscar', 'Oscar Other'],
    ]) {
      const res = await admin('post', '/users').send({ username, password: PASSWORD, verification_level: 'orb', name });
      expect(res.status).toBe(201);
    }
    otherApp = (await admin('post', '/apps').send({ name: 'Oscar’s app', redirect_uris: ['https://oscar.example/cb'] }))
      .body as { app_id: string };
    expect(
      (await admin('put', `/apps/${otherApp.app_id}/members`).send({ username: 'oscar', role: 'owner' })).status,
    ).toBe(201);
    browser = await launchChromium();
  }, 120000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all((servers ?? []).map(close));
    await receiver?.stop();
    await h?.close();
    await tx?.close();
  });

  /** Console messages of blocked content: the pages run no script and load nothing the CSP refuses. */
  const cspViolations = (page: Page) => {
    const seen: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) seen.push(m.text());
    });
    return seen;
  };

  /**
   * A value shown once (issue 40, item 13): the whole of it is visible at the page's width (its text is the
   * value, nothing overflows its box, sideways or down), one click selects exactly all of it, and its copy
   * button (portal.js) puts it on the clipboard and says so.
   */
  async function shownWhole(page: Page, id: string, value: string): Promise<void> {
    const selector = `output#${id}`;
    expect(await page.textContent(selector)).toBe(value);
    const box = (await page.evaluate(
      `(() => { const e = document.getElementById(${JSON.stringify(id)}); return [e.scrollWidth, e.clientWidth, e.scrollHeight, e.clientHeight]; })()`,
    )) as number[];
    expect([id, box[0] <= box[1], box[2] <= box[3]]).toEqual([id, true, true]);
    expect(await page.evaluate(`getComputedStyle(document.getElementById(${JSON.stringify(id)})).fontFamily`)).toMatch(
      /mono/i,
    );
    await page.click(selector);
    expect(await page.evaluate('String(window.getSelection())')).toBe(value);
    await page.evaluate('window.getSelection().removeAllRanges()');
    await page.click(`button[data-copy="${id}"]`);
    // polled from outside the page (the CSP allows no eval)
    await page.locator(`#${id}-status`, { hasText: 'Copied.' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(value);
  }

  const shoot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

  /** Signs in from the portal's landing page, through the provider's sign-in page (and consent the first time). */
  async function signIn(username: string, viewport = DESKTOP): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport });
    // the copy buttons write to the clipboard; the tests read it back
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    const page = await context.newPage();
    await page.goto(`${origin}/portal`);
    await page.click('#portal-signin');
    await submitSignIn(page, username, PASSWORD);
    const next = await Promise.race([
      page.waitForSelector('button[name=decision][value=approve]').then(() => 'consent' as const),
      page.waitForSelector('#portal-username').then(() => 'portal' as const),
    ]);
    if (next === 'consent') {
      expect(await page.textContent('h1')).toContain('Attest developer portal');
      await page.click('button[name=decision][value=approve]');
      await page.waitForSelector('#portal-username');
    }
    expect(new URL(page.url()).pathname).toBe('/portal');
    expect(await page.textContent('#portal-username')).toBe(username);
    return { context, page };
  }

  it('shows a signed-out visitor only “Sign in with Attest”, accessibly', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const csp = cspViolations(page);
    const res = await page.goto(`${origin}/portal`);
    expect(res?.status()).toBe(200);
    expect(await page.isVisible('#portal-signin')).toBe(true);
    await expectAccessible(page);
    await shoot(page, 'signed-out');
    expect(csp).toEqual([]);
    await context.close();
  });

  it('an owner signs in with Attest, creates an app, adds a redirect URI and an API key seen only once', async () => {
    const { context, page } = await signIn('alice');
    const csp = cspViolations(page);
    // no app yet: the empty state says what to do
    expect(await page.isVisible('#no-apps')).toBe(true);
    await expectAccessible(page);
    await shoot(page, 'no-apps');

    await page.fill('#new-name', 'Alice’s shop');
    await page.fill('#new-redirect', 'http://localhost:3000/callback');
    await page.check('input[name=kind][value=confidential]');
    await page.click('#create-app');
    await page.waitForSelector('#client-secret');
    appId = (await page.textContent('#client-id')) ?? '';
    expect(appId).toMatch(/^app_[0-9a-f]{32}$/);
    const secret = (await page.textContent('#client-secret')) ?? '';
    expect(secret.length).toBeGreaterThanOrEqual(20);
    expect(await h.ctx.kernel.teams.roleOf(appId, (await h.ctx.kernel.users.findByUsername('alice'))!.id)).toBe(
      'owner',
    );
    // one click on the client ID selects all of it; the secret is shown whole, selected whole, copied whole
    await page.click('#client-id');
    expect(await page.evaluate('String(window.getSelection())')).toBe(appId);
    await shownWhole(page, 'client-secret', secret);
    // its time to the second
    expect(await page.textContent('dl.facts time')).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
    await page.click('#snippet');
    expect(await page.evaluate('String(window.getSelection())')).toContain(`'${appId}'`);
    await expectAccessible(page);

    // a second redirect URI
    await page.goto(`${origin}/portal/apps/${appId}`);
    expect(await page.isVisible('#client-secret')).toBe(false);
    expect(await page.content()).not.toContain(secret);
    await page.fill('#redirect_uris', 'http://localhost:3000/callback\nhttps://shop.example.com/callback');
    await page.click('#save-settings');
    await page.waitForSelector('#portal-notice');
    expect(await page.textContent('#portal-notice')).toBe('Settings saved.');
    expect((await h.ctx.kernel.apps.find(appId))?.redirectUris).toEqual([
      'http://localhost:3000/callback',
      'https://shop.example.com/callback',
    ]);
    const [updated] = await h.ctx.kernel.audit.list({ types: ['app.updated'], limit: 1 });
    expect(updated).toMatchObject({ actorType: 'user', subject: appId });
    expect(updated.detail).toMatchObject({ via: 'portal', username: 'alice' });

    await expectAccessible(page);
    await shoot(page, 'app');

    // the security sub-page: its own URL, its form lands back on it
    await page.click('nav.subnav >> text=Security');
    await page.waitForSelector('#save-security');
    expect(new URL(page.url()).pathname).toBe(`/portal/apps/${appId}/security`);
    await page.selectOption('#min_verification_level', 'device');
    await page.click('#save-security');
    await page.waitForSelector('#portal-notice');
    expect(new URL(page.url()).pathname).toBe(`/portal/apps/${appId}/security`);
    expect((await h.ctx.kernel.apps.find(appId))?.minVerificationLevel).toBe('device');
    // a rotated secret is shown whole there too
    await page.click('#rotate-secret');
    await page.waitForSelector('#client-secret');
    const rotated = (await page.textContent('#client-secret')) ?? '';
    expect(rotated).not.toBe(secret);
    await shownWhole(page, 'client-secret', rotated);
    await expectAccessible(page);
    await shoot(page, 'app-security');

    // the agents and devices sub-page: the device flow and CIBA poll on; acting for any person read-only
    await page.click('nav.subnav >> text=Agents and devices');
    await page.waitForSelector('#save-agents');
    expect(new URL(page.url()).pathname).toBe(`/portal/apps/${appId}/agents`);
    expect(await page.textContent('#may-act-for-users')).toBe('No');
    await page.check('#device_flow');
    await page.selectOption('#ciba_mode', 'poll');
    await page.click('#save-agents');
    await page.waitForSelector('#portal-notice');
    expect(new URL(page.url()).pathname).toBe(`/portal/apps/${appId}/agents`);
    expect(await h.ctx.kernel.apps.find(appId)).toMatchObject({
      deviceAuthorizationGrant: true,
      backchannelTokenDeliveryMode: 'poll',
    });
    expect(await page.isChecked('#device_flow')).toBe(true);
    await expectAccessible(page);
    await shoot(page, 'app-agents');

    // a viewer on the team, through the team sub-page's form
    await page.click('nav.subnav >> text=Team');
    await page.waitForSelector('#add-member');
    await page.fill('#member-username', 'victor');
    await page.selectOption('#member-role', 'viewer');
    await page.click('#add-member');
    await page.waitForSelector('li[data-member=victor]');
    expect(new URL(page.url()).pathname).toBe(`/portal/apps/${appId}/team`);
    await expectAccessible(page);
    await shoot(page, 'app-team');

    // the danger zone: disabled, then enabled again, each back on it
    await page.click('nav.subnav >> text=Danger zone');
    await page.click('#disable-app');
    await page.waitForSelector('#enable-app');
    expect(new URL(page.url()).pathname).toBe(`/portal/apps/${appId}/danger-zone`);
    expect((await h.ctx.kernel.apps.find(appId))?.disabledAt).not.toBeNull();
    await expectAccessible(page);
    await page.click('#enable-app');
    await page.waitForSelector('#disable-app');
    expect((await h.ctx.kernel.apps.find(appId))?.disabledAt).toBeNull();
    await shoot(page, 'app-danger');

    // an API key, shown once
    await page.click('nav.tabs >> text=API keys');
    await page.waitForSelector('#no-keys');
    await page.fill('#key-name', 'shop-backend');
    await page.click('#create-key');
    await page.waitForSelector('#new-api-key');
    const key = (await page.textContent('#new-api-key')) ?? '';
    expect(key).toMatch(/^api_/);
    apiKey = key;
    // the whole key at 1280 px (it was cut to "api a2V5…" in a read-only input)
    await shownWhole(page, 'new-api-key', key);
    await expectAccessible(page);
    await shoot(page, 'api-key-created');
    const stored = (await tx.admin('get', `/apps/${appId}/api-keys`)).body as { name: string; revoked_at: null }[];
    expect(stored).toEqual([expect.objectContaining({ name: 'shop-backend', revoked_at: null })]);
    // reloading does not show it again (the POST's page is not resubmitted: the tab is opened anew)
    await page.goto(`${origin}/portal/apps/${appId}/keys`);
    expect(await page.isVisible('#new-api-key')).toBe(false);
    expect(await page.content()).not.toContain(key);
    expect(await page.isVisible(`li >> text=shop-backend`)).toBe(true);
    await expectAccessible(page);
    await shoot(page, 'api-keys');

    // the payment policy (issue 44): set by the owner; a refused value is named, the field marked, and accessible
    await page.click('nav.tabs >> text=Payment policy');
    await page.waitForSelector('#policy-form');
    await expectAccessible(page);
    await page.fill('#policy-underpayment-tolerance-percent', '80');
    await page.click('#save-policy');
    await page.waitForSelector('#portal-error');
    expect(await page.getAttribute('#policy-underpayment-tolerance-percent', 'aria-invalid')).toBe('true');
    await expectAccessible(page);
    await shoot(page, 'payment-policy-refused');
    await page.fill('#policy-underpayment-tolerance-percent', '1.5');
    await page.fill('#policy-return-origins', 'https://shop.example');
    await page.click('#save-policy');
    await page.waitForSelector('text=Payment policy saved');
    expect((await tx.admin('get', `/apps/${appId}/payment-policy`)).body).toMatchObject({
      underpayment_tolerance_percent: '1.5',
      return_origins: ['https://shop.example'],
    });
    await expectAccessible(page);
    await shoot(page, 'payment-policy');

    await page.click('nav.tabs >> text=Sign-in insight');
    await page.waitForSelector('#signins-total');
    await expectAccessible(page);
    await shoot(page, 'insight');

    await page.goto(`${origin}/portal`);
    expect(await page.isVisible(`li[data-app="${appId}"]`)).toBe(true);
    await expectAccessible(page);
    await shoot(page, 'apps');
    expect(csp).toEqual([]);
    await context.close();
  });

  it('the owner adds a webhook with a filter, sends a test event to a receiver and sees it delivered; finds a payment by reference', async () => {
    const { context, page } = await signIn('alice');
    const csp = cspViolations(page);
    await page.goto(`${origin}/portal/apps/${appId}`);
    await page.click('nav.tabs >> text=Webhooks');
    await page.waitForSelector('#no-webhooks');
    await expectAccessible(page);
    await shoot(page, 'webhooks-empty');
    await page.fill('#webhook-url', receiver.url);
    await page.fill('#webhook-description', 'shop backend');
    // the event types: ticked from the list of known types
    await page.check('#event-transaction-all');
    await page.check('#event-payment-request-paid');
    await page.click('#add-webhook');
    await page.waitForSelector('#webhook-secret');
    const secret = (await page.textContent('#webhook-secret')) ?? '';
    expect(secret).toMatch(/^whsec_/);
    await shownWhole(page, 'webhook-secret', secret);
    await expectAccessible(page);
    await shoot(page, 'webhook-created');
    const [stored] = (await tx.admin('get', `/apps/${appId}/webhooks`)).body as {
      webhook_id: string;
      enabled_events: string[];
    }[];
    expect(stored.enabled_events).toEqual(['transaction.*', 'payment_request.paid']);
    webhookId = stored.webhook_id;

    // the endpoint's page: a test event, delivered to the receiver, then in the log with its attempt
    await page.click(`a[href$="/webhooks/${webhookId}"]`);
    await page.waitForSelector('#no-deliveries');
    expect(await page.content()).not.toContain(secret);
    // the endpoint's form shows what was ticked
    expect(await page.isChecked('#event-transaction-all')).toBe(true);
    expect(await page.isChecked('#event-payment-request-paid')).toBe(true);
    expect(await page.isChecked('#event-transaction-mined')).toBe(false);
    // the receiver answers the test event with a body of its own: the log shows it
    receiver.answer({ status: 200, body: '{"received":"yes"}', headers: { 'content-type': 'application/json' } });
    await page.click('#send-test');
    await page.waitForSelector('#portal-notice');
    const [got] = await receiver.waitFor(1, (r) => r.body.includes('"webhook.test"'));
    expect(JSON.parse(got.body)).toMatchObject({ type: 'webhook.test', test: true });
    for (let i = 0; i < 100 && (await page.locator('[data-status=succeeded]').count()) === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await page.reload();
    }
    expect(await page.locator('li[data-delivery] [data-status=succeeded]').count()).toBe(1);
    await page.click('li[data-delivery] summary');
    expect(await page.textContent('li[data-delivery] tbody tr td:nth-child(3)')).toBe('200');
    // its status, how long it took, the body sent and the body answered
    expect(await page.textContent('tr[data-attempt="1"] [data-cell=duration]')).toMatch(/^\d+ ms$/);
    expect(await page.textContent('tr[data-bodies="1"] pre >> nth=0')).toBe(got.body);
    expect(await page.textContent('tr[data-bodies="1"] pre >> nth=1')).toBe('{"received":"yes"}');
    expect(await page.isVisible('tr[data-bodies="1"] pre >> nth=1')).toBe(true);
    expect(await page.content()).not.toContain(got.headers['webhook-signature']);
    await expectAccessible(page);
    await shoot(page, 'webhook');
    const [tested] = await h.ctx.kernel.audit.list({ types: ['webhook.test_sent'], limit: 1 });
    expect(tested).toMatchObject({ actorType: 'user', subject: webhookId });
    expect(tested.detail).toMatchObject({ via: 'portal', username: 'alice', app_id: appId });

    // a payment the app's backend records with its API key (to its receiving address), found in the portal by its reference
    await receiveAt(tx, appId, `0x${'b'.repeat(40)}`);
    const recorded = await request(tx.publicApp)
      .post('/api/v2/client/transaction')
      .set('Authorization', `Bearer ${apiKey}`)
      .send({
        app_id: appId,
        type: 'pay',
        reference: 'order-2001',
        transaction_hash: `0x${'7'.repeat(64)}`,
        from: `0x${'a'.repeat(40)}`,
        to: `0x${'b'.repeat(40)}`,
        chain: 'worldchain',
        token: 'USDCE',
        token_amount: '12500000',
      });
    expect(recorded.status).toBe(201);
    // the filter lets transaction.* through: the receiver gets it too
    await receiver.waitFor(1, (r) => r.body.includes('"transaction.created"'));
    await page.click('nav.tabs >> text=Payments');
    await page.waitForSelector('#search-reference');
    await page.fill('#search-reference', 'order-2001');
    await page.click('#search-payments');
    await page.waitForSelector(`li[data-transaction="${recorded.body.transaction_id}"]`);
    expect(await page.textContent(`li[data-transaction="${recorded.body.transaction_id}"]`)).toContain('12.5 USDCE');
    expect(await page.isVisible('#no-requests')).toBe(true);
    await expectAccessible(page);
    await shoot(page, 'payments');
    await page.click(`li[data-transaction="${recorded.body.transaction_id}"] a`);
    await page.waitForSelector('#transaction-status');
    expect(await page.textContent('#transaction-status')).toContain('pending');
    await expectAccessible(page);
    await shoot(page, 'transaction');

    await page.click('nav.tabs >> text=Events');
    // the events list shows an event once every transaction begun before it has ended (the other test
    // file's too, on a shared Postgres): reload until it is listed
    await page.waitForSelector('#events-heading');
    for (let i = 0; i < 200 && (await page.locator('li[data-event]').count()) === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await page.reload();
    }
    expect(await page.textContent('ul.items')).toContain('transaction.created');
    await expectAccessible(page);
    await shoot(page, 'events');
    expect(csp).toEqual([]);
    await context.close();
  });

  it('lays the pages out for a phone', async () => {
    const { context, page } = await signIn('alice', PHONE);
    await page.goto(`${origin}/portal/apps/${appId}`);
    // nothing wider than the screen: no sideways scrolling
    const widths = (await page.evaluate(
      '[document.documentElement.scrollWidth, document.documentElement.clientWidth]',
    )) as number[];
    expect(widths[0]).toBeLessThanOrEqual(widths[1]);
    await expectAccessible(page);
    await shoot(page, 'app-phone');
    for (const [route, name] of [
      [`/webhooks/${webhookId}`, 'webhook-phone'],
      ['/payments', 'payments-phone'],
    ]) {
      await page.goto(`${origin}/portal/apps/${appId}${route}`);
      // the widest part open: a delivery's attempts
      if ((await page.locator('details summary').count()) > 0) await page.click('details summary >> nth=0');
      const [scroll, client] = (await page.evaluate(
        '[document.documentElement.scrollWidth, document.documentElement.clientWidth]',
      )) as number[];
      expect([route, scroll <= client]).toEqual([route, true]);
      await expectAccessible(page);
      await shoot(page, name);
    }
    await context.close();
  });

  it('a viewer is offered no change, and the server refuses a forged one carrying a valid CSRF token', async () => {
    const { context, page } = await signIn('victor');
    await page.click(`li[data-app="${appId}"] a`);
    await page.waitForSelector('#read-only');
    expect(await page.textContent('#your-role')).toBe('viewer');
    for (const selector of ['#save-settings', '#rotate-secret', '#add-member', '#disable-app']) {
      expect([selector, await page.locator(selector).count()]).toEqual([selector, 0]);
    }
    expect(await page.isDisabled('#redirect_uris')).toBe(true);
    await expectAccessible(page);
    for (const [section, disabled] of [
      ['Security', '#profile'],
      ['Agents and devices', '#ciba_mode'],
      ['Team', null],
      ['Danger zone', null],
    ] as const) {
      await page.click(`nav.subnav >> text=${section}`);
      await page.waitForSelector(`nav.subnav a[aria-current=page] >> text=${section}`);
      for (const selector of [
        '#save-security',
        '#save-agents',
        '#rotate-secret',
        '#add-member',
        '#disable-app',
        '#enable-app',
      ])
        expect([section, selector, await page.locator(selector).count()]).toEqual([section, selector, 0]);
      if (disabled) expect(await page.isDisabled(disabled)).toBe(true);
      await expectAccessible(page);
    }
    const csrf = await page.inputValue('input[name=csrf] >> nth=0');
    expect(csrf).not.toBe('');
    await page.click('nav.tabs >> text=API keys');
    await page.waitForSelector('#read-only');
    expect(await page.locator('#create-key').count()).toBe(0);
    await expectAccessible(page);
    await page.click('nav.tabs >> text=Webhooks');
    await page.waitForSelector('#read-only');
    expect(await page.locator('#add-webhook').count()).toBe(0);
    await page.click(`a[href$="/webhooks/${webhookId}"]`);
    await page.waitForSelector('#read-only');
    for (const selector of ['#send-test', '#recover', '#rotate-webhook-secret', '#remove-webhook', '#save-webhook']) {
      expect([selector, await page.locator(selector).count()]).toEqual([selector, 0]);
    }
    await expectAccessible(page);

    const before = await h.ctx.kernel.apps.find(appId);
    const attempts: [string, Record<string, string>][] = [
      ['/settings', { name: 'Victor was here', redirect_uris: 'https://victor.example/cb' }],
      ['/security', { min_verification_level: 'none', profile: 'none' }],
      ['/agents', { backchannel_token_delivery_mode: 'none' }],
      ['/rotate-secret', {}],
      ['/disable', {}],
      ['/members', { username: 'victor', role: 'owner' }],
      ['/keys', { name: 'victor’s key' }],
      ['/webhooks', { url: receiver.url }],
      [`/webhooks/${webhookId}/test`, {}],
      [`/webhooks/${webhookId}/remove`, {}],
    ];
    for (const [route, form] of attempts) {
      // sent from the viewer's browser: its portal cookie, the CSRF token of its own page
      const res = await context.request.post(`${origin}/portal/apps/${appId}${route}`, {
        form: { csrf, ...form },
        maxRedirects: 0,
      });
      expect([route, res.status()]).toEqual([route, 403]);
      expect(await res.text()).toContain('Your role on');
    }
    expect(await h.ctx.kernel.apps.find(appId)).toEqual(before);
    expect(await h.ctx.kernel.teams.roleOf(appId, (await h.ctx.kernel.users.findByUsername('victor'))!.id)).toBe(
      'viewer',
    );
    const keys = (await tx.admin('get', `/apps/${appId}/api-keys`)).body as { name: string }[];
    expect(keys.map((k) => k.name)).toEqual(['shop-backend']);
    await context.close();
  });

  it('a member of another app sees nothing of this one: 404', async () => {
    const { context, page } = await signIn('oscar');
    expect(await page.isVisible(`li[data-app="${otherApp.app_id}"]`)).toBe(true);
    expect(await page.locator(`li[data-app="${appId}"]`).count()).toBe(0);
    expect(await page.content()).not.toContain('Alice’s shop');
    for (const route of [
      '',
      '/security',
      '/agents',
      '/team',
      '/danger-zone',
      '/keys',
      '/insight',
      '/webhooks',
      `/webhooks/${webhookId}`,
      '/payments',
      '/events',
    ]) {
      const res = await page.goto(`${origin}/portal/apps/${appId}${route}`);
      expect([route, res?.status()]).toEqual([route, 404]);
      expect(await page.content()).not.toContain('Alice’s shop');
      expect(await page.content()).not.toContain('shop-backend');
      expect(await page.content()).not.toContain(receiver.url);
    }
    await expectAccessible(page);
    await shoot(page, 'not-found');
    const csrf = await page.inputValue('input[name=csrf] >> nth=0');
    const res = await context.request.post(`${origin}/portal/apps/${appId}/settings`, {
      form: { csrf, name: 'Taken over', redirect_uris: 'https://evil.example/cb' },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(404);
    expect((await h.ctx.kernel.apps.find(appId))?.name).toBe('Alice’s shop');
    await context.close();
  });
});
