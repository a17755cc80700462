import http from 'node:http';
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { CHROMIUM, launchChromium, submitSignIn } from '../../../packages/common/test/support/chromium';
import { describeNeeding } from '../../../packages/common/test/support/binaries';
import { freePort } from '@attest/testing';
import { expectAccessible } from './axe';
import { ADMIN_TOKEN, createUser, identityHarness, REDIRECT_URI, type IdentityHarness } from './support';

jest.setTimeout(180_000);

/**
 * The device page (RFC 8628, issue 41) in a real browser: the person types the code (lower case, no dash),
 * signs in, sees the app, the resource and the scopes, and allows the device; every page passes axe-core
 * with no serious or critical violation, and runs no script.
 */
describeNeeding([CHROMIUM], 'the device page in Chromium', () => {
  let h: IdentityHarness;
  let server: http.Server;
  let browser: Browser;
  let origin: string;
  let cli: { app_id: string };

  beforeAll(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    h = await identityHarness({ BASE_URL: origin });
    server = await new Promise<http.Server>((resolve) => {
      const s = http.createServer(h.publicApp).listen(port, '127.0.0.1', () => resolve(s));
    });
    const admin = (path: string) => request(h.adminApp).post(path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    cli = (
      await admin('/admin/apps')
        .send({
          name: 'Terminal CLI',
          redirect_uris: [REDIRECT_URI],
          token_endpoint_auth_method: 'none',
          device_authorization_grant: true,
        })
        .expect(201)
    ).body;
    await admin('/admin/resources')
      .send({ uri: 'https://tools.example.com/mcp', name: 'Tools', scopes: ['tools:read'] })
      .expect(201);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (server) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    await h?.close();
  });

  it('a person types the code, signs in and allows the device; every page is accessible', async () => {
    const person = await createUser(h);
    const started = (
      await request(h.publicApp)
        .post('/device_authorization')
        .type('form')
        .send({ client_id: cli.app_id, scope: 'openid tools:read', resource: 'https://tools.example.com/mcp' })
        .expect(200)
    ).body as { user_code: string; device_code: string };
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`${origin}/device`);
    await expectAccessible(page);
    // a wrong code: the page again, with the message announced
    await page.fill('input[name=user_code]', 'bbbb bbbb');
    await page.click('button[value=confirm]');
    expect(await page.textContent('#device-error')).toContain('This code is not valid');
    await expectAccessible(page);
    await page.fill('input[name=user_code]', started.user_code.replace('-', '').toLowerCase());
    await page.click('button[value=confirm]');
    expect(new URL(page.url()).pathname).toBe('/signin');
    await submitSignIn(page, person.username, person.password);
    expect(new URL(page.url()).pathname).toBe('/device');
    expect(await page.textContent('h1')).toBe('Terminal CLI wants to');
    expect(await page.textContent('#user-code')).toBe(started.user_code);
    expect(await page.textContent('#resource')).toContain('Tools');
    await expectAccessible(page);
    await page.click('button[value=approve]');
    expect(await page.textContent('#device-decision')).toContain('Terminal CLI can now continue');
    await expectAccessible(page);
    await context.close();
    const tokens = await request(h.publicApp).post('/token').type('form').send({
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: started.device_code,
      client_id: cli.app_id,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.id_token).toBeDefined();
  });
});
