import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Express } from 'express';
import type { Browser } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../packages/common/test/support/chromium';
import { describeNeeding } from '../packages/common/test/support/binaries';
import { identityHarness } from '../services/identity/test/support';
import { pricesHarness } from '../services/prices/test/support';
import { transactionsHarness } from '../services/transactions/test/support';
import { ROOT } from './support';

const ARTIFACTS = path.join(ROOT, 'test-artifacts');

interface Harness {
  publicApp: Express;
  adminApp: Express;
  close(): Promise<void>;
}

const SERVICES: [string, () => Promise<Harness>, string[]][] = [
  ['identity', () => identityHarness(), ['/authorize', '/token', '/userinfo', '/.well-known/openid-configuration']],
  [
    'transactions',
    () => transactionsHarness(),
    ['/api/v2/client/transaction/{transaction_id}', '/api/v2/client/transaction'],
  ],
  ['prices', () => pricesHarness(), ['/public/v1/prices/latest/{native}', '/widget.js']],
];

/** Swagger UI at /docs of each service's public port, in Chromium: the operations render, nothing is refused by the CSP. */
describeNeeding([CHROMIUM], '/docs in Chromium on each public port', () => {
  let browser: Browser;

  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launchChromium();
  }, 60000);

  afterAll(async () => {
    await browser?.close();
  });

  it.each(SERVICES)(
    '%s: /docs shows its API',
    async (service, harness, paths) => {
      const h = await harness();
      const server = h.publicApp.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      const page = await browser.newPage();
      const problems: string[] = [];
      const requested: string[] = [];
      page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('request', (r) => requested.push(r.url()));
      try {
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const res = await page.goto(`${origin}/docs`);
        expect(res?.status()).toBe(200);
        await page.locator('.opblock-summary-path').first().waitFor({ timeout: 30000 });
        const shown = await page
          .locator('.opblock-summary-path')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-path')));
        expect(shown).toEqual(expect.arrayContaining([...paths, '/healthz', '/openapi.json']));
        await page.screenshot({ path: path.join(ARTIFACTS, `docs-${service}.png`), fullPage: true });
        // every file came from the service itself (no CDN), and the CSP refused nothing
        expect(requested.filter((u) => !u.startsWith(origin) && !u.startsWith('data:'))).toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await page.close();
        await new Promise((resolve) => server.close(resolve));
        await h.close();
      }
    },
    120000,
  );
});
