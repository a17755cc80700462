import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, launchChromium, submitSignIn } from '../../../packages/common/test/support/chromium';
import { startService, type RunningService } from '@attest/common';
import { describeNeeding } from '../../../packages/common/test/support/binaries';
import { freePort } from '../../../packages/common/test/support/throwaway';
import { identityService } from '../src/main';

const ADMIN_TOKEN = 'browser-admin-token-0123456789abcdef';

/** The relying party: records what reaches its callback (query or form_post). */
function appServer(): Promise<{
  url: string;
  callbacks: { method: string; params: Record<string, string> }[];
  close(): Promise<void>;
}> {
  const callbacks: { method: string; params: Record<string, string> }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const params =
        req.method === 'POST' ? Object.fromEntries(new URLSearchParams(body)) : Object.fromEntries(url.searchParams);
      if (url.pathname === '/callback') callbacks.push({ method: req.method ?? '', params });
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="done">signed in</p>');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://localhost:${(server.address() as AddressInfo).port}`,
        callbacks,
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}

describeNeeding([CHROMIUM], 'sign-in in a real browser (headless Chromium)', () => {
  let running: RunningService;
  let browser: Browser;
  let rp: Awaited<ReturnType<typeof appServer>>;
  let issuer: string;
  let app: { app_id: string; client_secret: string };

  beforeAll(async () => {
    const [port, adminPort] = [await freePort(), await freePort()];
    issuer = `http://localhost:${port}`;
    running = await startService(
      identityService,
      identityService.loadConfig({
        IDENTITY_PORT: String(port),
        IDENTITY_ADMIN_PORT: String(adminPort),
        BASE_URL: issuer,
        DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'attest-browser-')),
        ADMIN_TOKEN,
        LOG_LEVEL: 'silent',
      }),
    );
    rp = await appServer();
    const admin = (route: string, body: unknown) =>
      fetch(`${running.adminUrl}/admin${route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json());
    app = (await admin('/apps', { name: 'Browser app', redirect_uris: [`${rp.url}/callback`] })) as {
      app_id: string;
      client_secret: string;
    };
    await admin('/users', {
      username: 'ada',
      password: 'correct horse battery',
      verification_level: 'orb',
      name: 'Ada',
    });
    browser = await launchChromium();
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await rp?.close();
    await running?.stop();
  });

  const blockedByCsp = (page: Page) => {
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    return violations;
  };

  it('signs in, consents, and lands on the app with a code that /token exchanges', async () => {
    const page = await (await browser.newContext()).newPage();
    const violations = blockedByCsp(page);
    const redirect = `${rp.url}/callback`;
    await page.goto(
      `${issuer}/authorize?response_type=code&scope=openid%20profile&client_id=${app.app_id}&redirect_uri=${encodeURIComponent(redirect)}&state=s-1`,
    );
    await submitSignIn(page, 'ada', 'correct horse battery');
    await page.waitForSelector('button[name=decision][value=approve]');
    expect(await page.textContent('h1')).toContain('Browser app');
    await page.click('button[name=decision][value=approve]');
    await page.waitForSelector('#done');
    expect(violations).toEqual([]);
    const { method, params } = rp.callbacks.at(-1)!;
    expect(method).toBe('GET');
    expect(params.state).toBe('s-1');
    const token = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${app.app_id}:${app.client_secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: params.code, redirect_uri: redirect }),
    });
    expect(token.status).toBe(200);
    await page.screenshot({ path: path.join(os.tmpdir(), 'attest-browser-signed-in.png') });
    await page.context().close();
  });

  it('form_post: the page posts code, id_token and state to the app by itself', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations = blockedByCsp(page);
    const redirect = `${rp.url}/callback`;
    const before = rp.callbacks.length;
    await page.goto(
      `${issuer}/authorize?response_type=code%20id_token&response_mode=form_post&scope=openid&client_id=${app.app_id}&redirect_uri=${encodeURIComponent(redirect)}&state=s-2&nonce=n-2`,
    );
    await submitSignIn(page, 'ada', 'correct horse battery');
    await page.waitForSelector('#done');
    expect(violations).toEqual([]);
    const { method, params } = rp.callbacks.at(-1)!;
    expect(rp.callbacks.length).toBe(before + 1);
    expect(method).toBe('POST');
    expect(Object.keys(params).sort()).toEqual(['code', 'id_token', 'iss', 'state']);
    expect(params.state).toBe('s-2');
    await context.close();
  });
});
