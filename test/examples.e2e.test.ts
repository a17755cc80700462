import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser as Chromium } from 'playwright-core';
import { CHROMIUM, launchChromium, submitSignIn } from '../packages/common/test/support/chromium';
import { Browser } from '../services/identity/test/browser';
import { describeNeeding, freePort } from '../packages/common/test/support';
import { manage, ROOT, stackEnv, startStack, type Stack } from './support';

type Json = Record<string, string>;
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const PASSWORD = 'correct horse battery';

/** An example started as the README says (`node examples/…`), with its output kept for the test. */
function runExample(
  script: string,
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): { child: ChildProcess; output(): string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [path.join(ROOT, 'examples', script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  // 'close', not 'exit': output can still be in the pipes when the process has exited
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, output: () => output, exited };
}

async function listening(example: ReturnType<typeof runExample>, marker: string): Promise<void> {
  for (let i = 0; i < 300 && !example.output().includes(marker); i++) {
    if (example.child.exitCode !== null) throw new Error(`example exited: ${example.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!example.output().includes(marker)) throw new Error(`example did not start: ${example.output()}`);
}

describe('examples/ against pnpm start', () => {
  let stack: Stack;
  const run = async (...args: string[]) => {
    const result = await manage(args, stack.env);
    if (result.code !== 0) throw new Error(`manage ${args.join(' ')} failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as Json;
  };
  const examples: ReturnType<typeof runExample>[] = [];
  const start = (script: string, env: NodeJS.ProcessEnv, args: string[] = []) => {
    const example = runExample(script, env, args);
    examples.push(example);
    return example;
  };

  beforeAll(async () => {
    // a loaded machine may need minutes to start three services on embedded Postgres
    // the demo seed feed runs once, at start: a later run would stamp its prices newer than the
    // price this test sets by hand, which is served only until a newer quote arrives
    stack = await startStack(await stackEnv({ PRICE_FEED_INTERVAL_SECONDS: '86400' }), 400000);
    await run(
      'user',
      'create',
      '--username',
      'alice',
      '--password',
      PASSWORD,
      '--verification-level',
      'orb',
      '--name',
      'Alice',
    );
  }, 500000);

  afterAll(async () => {
    for (const e of examples) if (e.child.exitCode === null) e.child.kill('SIGTERM');
    await Promise.all(examples.map((e) => e.exited));
    await stack?.stop();
  }, 60000);

  it('express-signin: signs alice in (code + PKCE with openid-client), shows her claims, signs her out', async () => {
    const port = await freePort();
    const appUrl = `http://localhost:${port}`;
    const app = await run(
      'app',
      'create',
      '--name',
      'Express example',
      '--redirect-uri',
      `${appUrl}/callback`,
      '--post-logout-redirect-uri',
      `${appUrl}/`,
    );
    const example = start('express-signin/server.mjs', {
      APP_ID: app.app_id,
      CLIENT_SECRET: app.client_secret,
      ISSUER: stack.urls.identity,
      PORT: String(port),
    });
    await listening(example, 'listening');
    const rp = new Browser(appUrl);
    const login = await rp.request('/login');
    expect(login.status).toBe(302);
    const idp = new Browser(stack.urls.identity);
    const { location } = await idp.signIn(login.headers.get('location')!, {
      username: 'alice',
      password: PASSWORD,
    });
    expect(location).toMatch(new RegExp(`^${appUrl}/callback\\?code=`));
    const callback = await rp.request(location!);
    expect(callback.status).toBe(302);
    const home = await (await rp.request('/')).text();
    expect(home).toContain('verification level: orb');
    expect(home).toMatch(/sub: 0x[0-9a-f]{64}/);
    expect(home).toContain('&#34;name&#34;: &#34;Alice&#34;');
    const logout = await rp.request('/logout', { method: 'POST', form: {} });
    expect(logout.status).toBe(302);
    // RP-initiated logout at Attest, back to the registered post_logout_redirect_uri
    const endSession = await idp.request(logout.headers.get('location')!);
    expect({ status: endSession.status, location: endSession.headers.get('location') }).toEqual({
      status: 302,
      location: `${appUrl}/`,
    });
    expect(await (await rp.request('/')).text()).toContain('Sign in with Attest');
    // no Attest session left: signing in again shows the sign-in page rather than a code
    let again = await idp.request((await rp.request('/login')).headers.get('location')!);
    for (let hops = 0; again.status >= 300 && again.status < 400 && hops < 5; hops++) {
      const to = new URL(again.headers.get('location')!, stack.urls.identity).toString();
      expect(to.startsWith(stack.urls.identity)).toBe(true); // never back to the app with a code
      again = await idp.request(to);
    }
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('name="password"');
  }, 120000);

  it('express-signin: /login/orb lets an orb-verified person in (acr orb), refuses a device-level one', async () => {
    await run('user', 'create', '--username', 'dora', '--password', PASSWORD, '--verification-level', 'device');
    const port = await freePort();
    const appUrl = `http://localhost:${port}`;
    const app = await run('app', 'create', '--name', 'Orb example', '--redirect-uri', `${appUrl}/callback`);
    const example = start('express-signin/server.mjs', {
      APP_ID: app.app_id,
      CLIENT_SECRET: app.client_secret,
      ISSUER: stack.urls.identity,
      PORT: String(port),
    });
    await listening(example, 'listening');
    const signIn = async (username: string) => {
      const rp = new Browser(appUrl);
      const login = await rp.request('/login/orb');
      expect(login.status).toBe(302);
      expect(new URL(login.headers.get('location')!).searchParams.get('claims')).toContain('urn:attest:loa:orb');
      const result = await new Browser(stack.urls.identity).signIn(login.headers.get('location')!, {
        username,
        password: PASSWORD,
      });
      return { rp, ...result };
    };
    const alice = await signIn('alice');
    await alice.rp.request(alice.location!);
    expect(await (await alice.rp.request('/')).text()).toContain('acr: urn:attest:loa:orb');
    const dora = await signIn('dora');
    expect(dora.refusal!.html).toContain('Orb example requires a higher verification level');
    const back = await dora.rp.request(dora.refusal!.backToApp);
    expect(back.status).toBe(403);
    expect(await back.text()).toContain('This app is for orb-verified people only.');
  }, 120000);

  /** A fresh address the app receives payments at, added as an operator does (one app per address). */
  const receivingAddress = async (appId: string) => {
    const address = `0x${crypto.randomBytes(20).toString('hex')}`;
    await run('receiving-address', 'add', '--app-id', appId, '--chain', 'worldchain', '--address', address);
    return address;
  };

  it('merchant-backend: records a payment, retries while pending, reports it paid once mined', async () => {
    const app = await run('app', 'create', '--name', 'Shop', '--redirect-uri', 'http://localhost:3000/callback');
    // not one of the app's receiving addresses yet: refused, and the example says so
    const unknownShop = start(
      'merchant-backend/check-payment.mjs',
      { APP_ID: app.app_id, API_KEY: app.api_key, API_URL: stack.urls.transactions, PAY_TO: `0x${'3'.repeat(40)}` },
      ['order-41'],
    );
    expect(await unknownShop.exited).toBe(5);
    expect(JSON.parse(unknownShop.output().trim())).toEqual({
      event: 'refused',
      reference: 'order-41',
      code: 'receiving_address_not_registered',
      attribute: 'to',
    });
    const wallet = `0x${crypto.randomBytes(20).toString('hex')}`;
    const txHash = `0x${crypto.randomBytes(32).toString('hex')}`;
    const env = {
      APP_ID: app.app_id,
      API_KEY: app.api_key,
      API_URL: stack.urls.transactions,
      POLL_SECONDS: '0.2',
      ATTEMPTS: '600',
      CUSTOMER_WALLET: wallet,
      TX_HASH: txHash,
      PAY_TO: await receivingAddress(app.app_id),
    };
    const example = start('merchant-backend/check-payment.mjs', env, ['order-42']);
    await listening(example, '"transaction_status":"pending"');
    const recorded = JSON.parse(example.output().split('\n')[0]) as Json;
    // `from` is the signed-in customer's wallet, from the shop's session
    expect(recorded).toMatchObject({ event: 'recorded', reference: 'order-42', from: wallet });
    // the same transaction for another order is refused: one transaction pays one order
    const second = start('merchant-backend/check-payment.mjs', env, ['order-43']);
    expect(await second.exited).toBe(4);
    expect(JSON.parse(second.output().trim())).toEqual({
      event: 'refused',
      reference: 'order-43',
      code: 'transaction_already_claimed',
      attribute: 'transaction_hash',
    });
    await run('transaction', 'set-status', recorded.transaction_id, 'mined');
    expect(await example.exited).toBe(0);
    const lines = example
      .output()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    expect(lines.at(-2)).toMatchObject({
      event: 'status',
      transaction_status: 'mined',
      token_amount: '1500000',
      token: 'USDCE',
    });
    expect(lines.at(-1)).toEqual({ event: 'paid', amount: '1.5 USDCE' });
  }, 120000);

  it('merchant-backend: receives signed webhooks, refuses forged ones, ships a payment once when it is mined', async () => {
    const app = await run(
      'app',
      'create',
      '--name',
      'Webhook shop',
      '--redirect-uri',
      'http://localhost:3000/callback',
    );
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/webhooks/attest`;
    const hook = await run('webhook', 'add', '--app-id', app.app_id, '--url', url);
    const receiver = start('merchant-backend/receive-webhooks.mjs', {
      WEBHOOK_SECRET: hook.secret,
      APP_ID: app.app_id,
      API_KEY: app.api_key,
      API_URL: stack.urls.transactions,
      PORT: String(port),
    });
    await listening(receiver, '"event":"listening"');

    // a request signed with another secret, and one with a good signature over another body, are refused
    const body = JSON.stringify({ type: 'transaction.mined', data: { transaction_id: `0x${'a'.repeat(64)}` } });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const sign = (secret: Buffer, signed: string) =>
      `v1,${crypto.createHmac('sha256', secret).update(`msg_forged.${timestamp}.${signed}`).digest('base64')}`;
    const forged = (signature: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'webhook-id': 'msg_forged', 'webhook-timestamp': timestamp, 'webhook-signature': signature },
        body,
      });
    expect((await forged(sign(crypto.randomBytes(24), body))).status).toBe(400);
    const realKey = Buffer.from(hook.secret.slice('whsec_'.length), 'base64');
    expect((await forged(sign(realKey, `${body} `))).status).toBe(400);

    const payer = start(
      'merchant-backend/check-payment.mjs',
      {
        APP_ID: app.app_id,
        API_KEY: app.api_key,
        API_URL: stack.urls.transactions,
        POLL_SECONDS: '0.2',
        ATTEMPTS: '600',
        PAY_TO: await receivingAddress(app.app_id),
      },
      ['order-77'],
    );
    await listening(payer, '"transaction_status":"pending"');
    const recorded = JSON.parse(payer.output().split('\n')[0]) as Json;
    await listening(receiver, '"type":"transaction.created"');
    await run('transaction', 'set-status', recorded.transaction_id, 'mined');
    expect(await payer.exited).toBe(0);
    await listening(receiver, '"event":"ship"');
    const events = receiver
      .output()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    expect(events.filter((e) => e.event === 'webhook').map((e) => [e.type, e.reference])).toEqual([
      ['transaction.created', 'order-77'],
      ['transaction.mined', 'order-77'],
    ]);
    expect(events.filter((e) => e.event === 'ship')).toEqual([{ event: 'ship', reference: 'order-77' }]);
    // Attest records both deliveries as answered by the receiver (a 204, moments after it printed)
    let statuses: string[] = [];
    for (let i = 0; i < 100; i++) {
      const listed = JSON.parse((await manage(['webhook', 'deliveries', hook.webhook_id], stack.env)).stdout);
      statuses = (listed as { status: string }[]).map((d) => d.status);
      if (statuses.every((status) => status === 'succeeded')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(statuses).toEqual(['succeeded', 'succeeded']);
  }, 120000);

  it('merchant-backend: a checkout priced in USD with a payment request; the webhook receiver re-reads it and ships once', async () => {
    await run('price', 'set', '--token', 'WLD', '--fiat', 'USD', '--amount', '2.5');
    const app = await run(
      'app',
      'create',
      '--name',
      'Checkout shop',
      '--redirect-uri',
      'http://localhost:3000/callback',
    );
    const port = await freePort();
    const hook = await run(
      'webhook',
      'add',
      '--app-id',
      app.app_id,
      '--url',
      `http://127.0.0.1:${port}/webhooks/attest`,
    );
    const receiver = start('merchant-backend/receive-webhooks.mjs', {
      WEBHOOK_SECRET: hook.secret,
      APP_ID: app.app_id,
      API_KEY: app.api_key,
      API_URL: stack.urls.transactions,
      PORT: String(port),
    });
    await listening(receiver, '"event":"listening"');
    const payTo = await receivingAddress(app.app_id);
    const shop = start(
      'merchant-backend/checkout.mjs',
      {
        APP_ID: app.app_id,
        API_KEY: app.api_key,
        API_URL: stack.urls.transactions,
        POLL_SECONDS: '0.2',
        ATTEMPTS: '600',
        PAY_TO: payTo,
      },
      ['order-88'],
    );
    await listening(shop, '"status":"pending"');
    const [shown, recorded] = shop
      .output()
      .split('\n')
      .slice(0, 2)
      .map((l) => JSON.parse(l) as Json);
    // 12.50 USD at 2.5 USD per WLD: the customer is shown 5 WLD to the shop's address
    expect(shown).toMatchObject({
      event: 'request',
      reference: 'order-88',
      pay: '5 WLD',
      amount_due: '5000000',
      to: payTo,
      price: '12.50 USD',
    });
    expect(recorded).toMatchObject({ event: 'recorded', payment_request_id: shown.id });
    await run('transaction', 'set-status', recorded.transaction_id, 'mined');
    expect(await shop.exited).toBe(0);
    const lines = shop
      .output()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    expect(lines.at(-1)).toEqual({ event: 'ship', reference: 'order-88', paid: '5 WLD', status: 'paid' });
    // the receiver got payment_request.created and .paid, re-read the request and shipped it once
    await listening(receiver, '"event":"ship"');
    await listening(receiver, '"type":"payment_request.paid"');
    const events = receiver
      .output()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    const types = events.filter((e) => e.event === 'webhook').map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['payment_request.created', 'payment_request.paid']));
    expect(events.filter((e) => e.event === 'ship')).toEqual([
      { event: 'ship', reference: 'order-88', status: 'paid' },
    ]);
  }, 120000);

  describeNeeding([CHROMIUM], 'in headless Chromium', () => {
    let browser: Chromium;
    beforeAll(async () => {
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      browser = await launchChromium();
    }, 60000);
    afterAll(() => browser?.close());

    it('spa-signin: a public client signs alice in with oidc-client-ts (code + PKCE, no secret)', async () => {
      const port = await freePort();
      const origin = `http://localhost:${port}`;
      const app = await run(
        'app',
        'create',
        '--name',
        'SPA example',
        '--public',
        '--redirect-uri',
        `${origin}/`,
        '--web-origin',
        origin,
      );
      expect(app).not.toHaveProperty('client_secret');
      const example = start('spa-signin/server.mjs', {
        APP_ID: app.app_id,
        ISSUER: stack.urls.identity,
        PORT: String(port),
      });
      await listening(example, 'listening');
      const page = await browser.newPage();
      try {
        await page.goto(origin);
        await page.waitForSelector('#login:not([hidden])', { timeout: 30000 }).catch(async (err: Error) => {
          throw new Error(`${err.message}; the page says: ${await page.textContent('#status')}`);
        });
        await page.click('#login');
        await submitSignIn(page, 'alice', PASSWORD);
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
        expect(JSON.parse((await page.textContent('#claims'))!)).toMatchObject({ name: 'Alice' });
        await page.click('#logout');
        await page.waitForSelector('#login:not([hidden])');
      } finally {
        await page.close();
      }
    }, 120000);

    it('price-widget: a page on another origin shows the price the API gives, in the locale’s format', async () => {
      const port = await freePort();
      const example = start('price-widget/server.mjs', { PRICES_URL: stack.urls.prices, PORT: String(port) });
      await listening(example, 'listening');
      const api = await fetch(
        `${stack.urls.prices}/public/v1/miniapps/prices?cryptoCurrencies=WLD,USDCE&fiatCurrencies=USD,EUR`,
      );
      const prices = (
        (await api.json()) as {
          result: { prices: Record<string, Record<string, { amount: string; decimals: number }>> };
        }
      ).result.prices;
      const page = await browser.newPage();
      try {
        await page.goto(`http://localhost:${port}/`);
        await page.waitForSelector('attest-price#wld[data-state=ready]');
        await page.waitForSelector('attest-price#usdce[data-state=ready]');
        // the page's own view: each price element the widget rendered in its shadow root
        const shown = (await page.evaluate(`[...document.querySelectorAll('attest-price')].flatMap((el) =>
          [...el.shadowRoot.querySelectorAll('[part=price]')].map((s) => ({ id: el.id, fiat: s.getAttribute('data-fiat'), amount: s.getAttribute('data-amount'), text: s.textContent })))`)) as Json[];
        const expected = (token: string, fiat: string, locale: string) => {
          const { amount, decimals } = prices[token][fiat];
          const value = Number(amount) / 10 ** decimals;
          const text = new Intl.NumberFormat(locale, {
            style: 'currency',
            currency: fiat,
            minimumFractionDigits: 2,
            maximumFractionDigits: value < 1 ? 4 : 2,
          }).format(value);
          return { amount, text };
        };
        expect(shown).toEqual([
          { id: 'wld', fiat: 'USD', ...expected('WLD', 'USD', 'en-US') },
          { id: 'wld', fiat: 'EUR', ...expected('WLD', 'EUR', 'en-US') },
          { id: 'usdce', fiat: 'EUR', ...expected('USDCE', 'EUR', 'de-DE') },
        ]);
        expect(shown[0].text).toMatch(/^\$\d/);
        expect(shown[2].text).toMatch(/€$/);
        await page.screenshot({ path: path.join(ARTIFACTS, 'price-widget.png') });
      } finally {
        await page.close();
      }
    }, 120000);

    it('the widget shows a clear state when prices are unavailable', async () => {
      const page = await browser.newPage();
      try {
        await page.setContent(
          `<script src="${stack.urls.prices}/widget.js"></script><attest-price token="NOPE" fiat="USD" refresh="0"></attest-price>`,
        );
        await page.waitForSelector('attest-price[data-state=unavailable]');
        expect(await page.evaluate("document.querySelector('attest-price').shadowRoot.textContent")).toContain(
          'price unavailable',
        );
      } finally {
        await page.close();
      }
    }, 60000);
  });
});
