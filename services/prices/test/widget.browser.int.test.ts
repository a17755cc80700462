import fs from 'node:fs';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../../../packages/common/test/support/chromium';
import { pricesHarness, type PricesHarness } from './support';

const describeInChromium = fs.existsSync(CHROMIUM) ? describe : describe.skip;
jest.setTimeout(120000);

const listen = async (server: Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const close = (server: Server) => {
  server.closeAllConnections();
  return new Promise((r) => server.close(r));
};

describeInChromium('<attest-price> in Chromium: change, sparkline, live stream and polling fallback', () => {
  let h: PricesHarness;
  let browser: Browser;
  let api: Server;
  let site: Server;
  let apiUrl: string;
  let siteUrl: string;
  let page = '';
  beforeAll(async () => {
    h = await pricesHarness();
    await h.storage.db.query(
      `INSERT INTO quotes (token, fiat, amount, decimals, source, observed_at) VALUES
        ('WLD', 'USD', 1400000, 6, 'http', now() - interval '25 hours'),
        ('WLD', 'USD', 1450000, 6, 'http', now() - interval '2 hours'),
        ('WLD', 'USD', 1500000, 6, 'http', now() - interval '61 minutes')`,
    );
    api = http.createServer(h.publicApp);
    apiUrl = await listen(api);
    // the page is on another origin than the price API
    site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page));
    siteUrl = (await listen(site)).replace('127.0.0.1', 'localhost');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await close(site);
    await close(api);
    await h.close();
  });

  const shadow = (id: string, selector: string, attribute: string) =>
    `document.getElementById('${id}')?.shadowRoot?.querySelector('${selector}')?.getAttribute('${attribute}')`;

  it('shows the price, the 24 h change and a sparkline, and updates from the stream with no polling', async () => {
    page = `<!doctype html><html lang="en-US"><body>
      <script src="${apiUrl}/widget.js"></script>
      <attest-price id="live" token="WLD" fiat="USD" change sparkline="24h" refresh="0"></attest-price></body></html>`;
    const tab = await browser.newPage();
    try {
      await tab.goto(siteUrl);
      await tab.waitForSelector('attest-price#live[data-state=ready][data-transport=stream]');
      expect(await tab.evaluate(shadow('live', '[part=price]', 'data-amount'))).toBe('1510763');
      expect(await tab.evaluate(shadow('live', '[part~=change]', 'data-change'))).toBe('7.91');
      expect(await tab.evaluate(shadow('live', '[part~=change]', 'part'))).toBe('change up');
      await tab.waitForFunction(`${shadow('live', '[part=sparkline]', 'data-points')} === '3'`);
      // a change reaches the page through the stream (refresh="0": the widget never polls)
      await h.admin('post', '/prices').send({ token: 'WLD', fiat: 'USD', amount: '1.62' }).expect(201);
      await tab.waitForFunction(`${shadow('live', '[part=price]', 'data-amount')} === '1620000'`);
      expect(
        await tab.evaluate(`document.getElementById('live').shadowRoot.querySelector('[part=price]').textContent`),
      ).toBe('$1.62');
    } finally {
      await tab.close();
    }
  });

  it('falls back to polling (with If-None-Match) when the stream is refused', async () => {
    page = `<!doctype html><html lang="en-US"><body>
      <script src="${apiUrl}/widget.js"></script>
      <attest-price id="polled" token="WLD" fiat="USD" refresh="5" stream="${apiUrl}/no-stream-here"></attest-price></body></html>`;
    const tab = await browser.newPage();
    try {
      await tab.goto(siteUrl);
      await tab.waitForSelector('attest-price#polled[data-state=ready][data-transport=poll]');
      await h.admin('post', '/prices').send({ token: 'WLD', fiat: 'USD', amount: '1.64' }).expect(201);
      await tab.waitForFunction(`${shadow('polled', '[part=price]', 'data-amount')} === '1640000'`, undefined, {
        timeout: 20000,
      });
    } finally {
      await tab.close();
    }
  });
});
