import type { Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { CHROMIUM, launchChromium, submitSignIn } from '../../../packages/common/test/support/chromium';
import { describeNeeding } from '../../../packages/common/test/support/binaries';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { ADMIN_TOKEN, createUser, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';

type OpenIdClient = typeof import('openid-client');

const PAYMENT = { type: 'payment', amount: '120.00', currency: 'USD', payee: 'Skyline Air', reference: 'PNR K7Q2' };

jest.setTimeout(120_000);

/**
 * Issue 42, done when: a CIBA request with a payment detail is approved in headless Chromium on the account
 * page with a passkey (a virtual authenticator that verifies the user, through the DevTools protocol), and the
 * token the agent then gets carries the detail; the approval says a passkey with user verification was used.
 */
describeNeeding([CHROMIUM], 'CIBA approval with a passkey in Chromium', () => {
  let oidc: OpenIdClient;
  let h: IdentityHarness;
  let server: Server;
  let browser: Browser;
  let origin: string;
  let app: { app_id: string; client_secret: string };

  beforeAll(async () => {
    oidc = await import('openid-client');
    const port = await freePort();
    origin = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: origin });
    await new Promise<void>((resolve) => {
      server = h.publicApp.listen(port, '127.0.0.1', () => resolve());
    });
    app = (
      await request(h.adminApp)
        .post('/admin/apps')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({ name: 'Trip planner', redirect_uris: [REDIRECT_URI], backchannel_token_delivery_mode: 'poll' })
        .expect(201)
    ).body;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    if (server) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    await h?.close();
  });

  /** A page of a browser with a platform authenticator that verifies its user (PIN or biometric, simulated). */
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

  it('the person approves a payment on the account page with a passkey; the token carries the payment', async () => {
    const person = await createUser(h);
    const sub = await h.ctx.oauth.grants.subjectFor(app.app_id, person.user_id);
    const page = await pageWithAuthenticator();

    // signed in on the account page, the person adds a passkey (the authenticator makes it)
    await page.goto(`${origin}/signin?next=account`);
    await submitSignIn(page, person.username, person.password);
    await page.waitForURL(`${origin}/account`);
    await page.fill('#passkey-name', 'this laptop');
    await page.click('#passkey-add');
    await page.waitForURL(`${origin}/account?notice=passkey-added`);

    // the agent asks for the payment
    const config = await oidc.discovery(
      new URL(origin),
      app.app_id,
      undefined,
      oidc.ClientSecretBasic(app.client_secret),
      { execute: [oidc.allowInsecureRequests] },
    );
    const asked = await oidc.initiateBackchannelAuthentication(config, {
      scope: 'openid',
      login_hint: sub,
      binding_message: 'K7Q2',
      authorization_details: JSON.stringify([PAYMENT]),
    });

    // the next visit shows the notice and the request in words; the passkey approves it
    await page.goto(`${origin}/account`);
    expect(await page.textContent('#pending-approvals')).toContain('An app asks you to approve an action');
    const item = page.locator('li[data-approval]');
    expect(await item.locator('[data-binding-message]').textContent()).toBe('K7Q2');
    expect(await item.locator('li[data-detail-type=payment]').textContent()).toBe(
      'Pay 120.00 USD to Skyline Air (reference: PNR K7Q2)',
    );
    await item.locator('[data-approve-passkey]').click();
    await page.waitForURL(`${origin}/account?approval=approved#approvals`);
    expect(await page.textContent('#approval-notice')).toContain('Approved');
    expect(await page.locator('li[data-approval]').count()).toBe(0);

    const tokens = await oidc.pollBackchannelAuthenticationGrant(config, { ...asked, interval: 0 });
    const claims = tokens.claims()!;
    expect(claims.sub).toBe(sub);
    expect(claims.authorization_details).toEqual([PAYMENT]);
    expect(claims.amr).toEqual(['hwk', 'user']);
    const access = JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(access.authorization_details).toEqual([PAYMENT]);
    // the approval is used once
    await expect(oidc.pollBackchannelAuthenticationGrant(config, { ...asked, interval: 0 })).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });
});
