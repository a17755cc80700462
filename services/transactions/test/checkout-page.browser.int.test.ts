/// <reference lib="dom" />
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import jsQR from 'jsqr';
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { getAddress } from 'viem';
import { describeNeeding } from '../../../packages/common/test/support/binaries';
import { CHROMIUM, launchChromium } from '../../../packages/common/test/support/chromium';
import { receiveAt } from './support';
import { checkoutChain, freshAddress, type CheckoutChain } from './support/checkout-chain';

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const SHOP = 'https://shop.example';

// Chromium, a local chain and axe on a loaded two-core machine
jest.setTimeout(180_000);

describeNeeding([CHROMIUM], 'the customer’s payment page (issue 44, item 6) in Chromium, paid on ganache', () => {
  let c: CheckoutChain;
  let server: http.Server;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    c = await checkoutChain({ CHAIN_IDS: JSON.stringify({ worldchain: 1337 }) });
    await c.watcher(1).scan();
    server = http.createServer(c.h.publicApp).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    const set = await c.api('put', '/api/v2/client/payment-policy').send({
      display_name: 'Corner Shop',
      return_origins: [SHOP],
    });
    expect(set.status).toBe(200);
  }, 120000);
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await c?.close();
  });

  it('return_url must be https on one of the app’s return origins', async () => {
    const to = freshAddress();
    await receiveAt(c.h, c.appId, to);
    for (const url of ['http://shop.example/done', 'https://elsewhere.example/done']) {
      const res = await c.api('post', '/api/v2/client/payment-requests').send({
        reference: `bad-return-${url}`,
        chain: 'worldchain',
        token: 'USDCE',
        to,
        token_amount: '1000000',
        return_url: url,
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_parameter', attribute: 'return_url' });
    }
  });

  it('shows the amounts and a QR code of the EIP-681 URI, turns to paid without a reload, then returns to return_url', async () => {
    const shop = freshAddress();
    const r = await c.create(shop, {
      return_url: `${SHOP}/thanks/1`,
      amount: '2.50',
      currency: 'USD',
      token_amount: undefined,
    });
    const uri = `ethereum:${getAddress(c.usdce)}@1337/transfer?address=${shop}&uint256=2500000`;
    expect(r).toMatchObject({
      payment_url: `http://localhost:4001/pay/${r.id}`,
      payment_uri: { USDCE: uri },
      return_url: `${SHOP}/thanks/1`,
    });

    // the page without script: everything but the live update, under a CSP without inline script
    const html = await request(c.h.publicApp).get(`/pay/${r.id}`);
    expect(html.status).toBe(200);
    expect(html.headers['content-security-policy']).toContain("script-src 'self'");
    expect(html.text).not.toMatch(/<script>|<script [^>]*>[^<]/);
    for (const text of [
      'Corner Shop',
      '2.50 USD',
      '2.5 USDCE',
      shop,
      'Waiting for your payment',
      `href="${uri.replace(/&/g, '&amp;')}"`,
    ])
      expect(html.text).toContain(text);
    expect((await request(c.h.publicApp).get(`/pay/pr_${'0'.repeat(32)}`)).status).toBe(404);

    const page = await browser.newPage();
    await page.route(`${SHOP}/**`, (route) =>
      route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: '<!doctype html><title>Thanks</title><p>Thanks</p>',
      }),
    );
    const seen: string[] = [];
    page.on('console', (m) => seen.push(m.text()));
    const navigations: string[] = [];
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations.push(f.url());
    });
    await page.goto(`${base}/pay/${r.id}`);
    await page.waitForFunction(() => document.getElementById('expires')?.textContent?.includes(' s'));

    // accessible: no serious or critical axe finding (evaluated through DevTools, outside the page's CSP)
    await page.evaluate(AXE_SOURCE);
    const violations = (await page.evaluate(
      `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id))`,
    )) as string[];
    expect(violations).toEqual([]);

    // the QR code, as a screenshot, decodes to the EIP-681 URI
    const png = await page.locator('.qr').first().screenshot();
    const decoder = await browser.newPage();
    const pixels = (await decoder.evaluate(
      async (src) => {
        const img = new Image();
        img.src = src;
        await img.decode();
        const canvas = document.createElement('canvas');
        canvas.width = img.width;
        canvas.height = img.height;
        const ctx = canvas.getContext('2d')!;
        ctx.drawImage(img, 0, 0);
        const data = ctx.getImageData(0, 0, img.width, img.height);
        return { width: data.width, height: data.height, data: Array.from(data.data) };
      },
      `data:image/png;base64,${png.toString('base64')}`,
    )) as { width: number; height: number; data: number[] };
    await decoder.close();
    expect(jsQR(Uint8ClampedArray.from(pixels.data), pixels.width, pixels.height)?.data).toBe(uri);

    // the status is reported as it changes, without a reload
    await page.evaluate(() => {
      const status = document.getElementById('status')!;
      new MutationObserver(() => console.log(`status: ${status.textContent}`)).observe(status, { childList: true });
    });
    const before = navigations.length;
    await c.chain.transfer(c.usdce, shop, 2500000n);
    await c.scanned();
    await page.waitForURL(`${SHOP}/thanks/1`);
    expect(seen).toContain('status: Paid');
    // one navigation only: to return_url (the page was not reloaded)
    expect(navigations.slice(before)).toEqual([`${SHOP}/thanks/1`]);
    expect(await c.read(r.id)).toMatchObject({ status: 'paid' });
    await page.close();
  });
});
