import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startService, type RunningService } from '@attest/common';
import { freePort, testLogger } from '../packages/common/test/support';
import { identityService } from '../services/identity/src/main';
import { Browser } from '../services/identity/test/browser';
import { startDemo, type RunningDemo } from '../apps/demo/src/demo';

const ADMIN_TOKEN = 'demo-agents-admin-token-0123456789abcdef';
const PASSWORD = 'correct horse battery';
const USER = { username: 'alma', password: PASSWORD };

jest.setTimeout(90_000);

const unescape = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
/** The text of the element with this id on a demo page (unescaped), or undefined. */
const byId = (page: string, id: string) => {
  const m = new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(page);
  return m ? unescape(m[1]) : undefined;
};

/**
 * Issue 42, "the demo app shows the agents section": against a running provider, the signed-in person lets
 * the demo's agent act for them (consent to its trips API), the agent exchanges their token (RFC 8693) and
 * shows the delegated token's act, aud and scope; a widened scope is refused; the account page lists the
 * agent. The agent asks for a payment (CIBA with a payment detail): approved with the password on the
 * account page, the demo shows the approved detail; denied, it shows access_denied.
 */
describe('demo app: the agents section', () => {
  let identity: RunningService;
  let demo: RunningDemo;
  let issuer: string;
  const dirs: string[] = [];
  const tmp = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-demo-agents-'));
    dirs.push(dir);
    return dir;
  };
  /** The person's browser: the demo (rp) and Attest (op), each its cookies. */
  let rp: Browser;
  let op: Browser;

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
      body: JSON.stringify({ ...USER, verification_level: 'orb' }),
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
    rp = new Browser(demo.url);
    op = new Browser(issuer);
    const login = await rp.request('/login');
    const { location } = await op.signIn(login.headers.get('location')!, USER);
    expect((await rp.request(location!)).status).toBe(303);
  }, 60_000);
  afterAll(async () => {
    await demo?.stop();
    await identity?.stop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  const home = async () => (await rp.request('/')).text();

  it('the agent acts for the person through a token exchange: act, aud and the narrowed scope; wider is refused', async () => {
    // the person declines at Attest: the agents section says so, and nothing is granted
    const declined = new URL((await rp.request('/agents/authorize')).headers.get('location')!);
    const refusal = await rp.request(
      `/callback?${new URLSearchParams({ state: declined.searchParams.get('state')!, error: 'access_denied', error_description: 'The person denied the request.' })}`,
    );
    expect([refusal.status, refusal.headers.get('location')]).toEqual([303, '/#agents']);
    expect(byId(await home(), 'agents-error')).toBe(
      'The agent may not act for you: access_denied: The person denied the request.',
    );

    const before = await home();
    expect(before).toContain('<h2 id="agents-heading">Agents</h2>');
    expect(before).toContain('id="agent-authorize" href="/agents/authorize"');
    expect(before).not.toContain('id="agent-exchange"');

    // the person lets the agent act for them: an authorization request for the trips API, consented at Attest
    const start = await rp.request('/agents/authorize');
    expect(start.status).toBe(303);
    const asked = new URL(start.headers.get('location')!);
    expect(asked.searchParams.get('resource')).toBe(`${demo.url}/trips`);
    expect(asked.searchParams.get('scope')).toBe('openid trips:read trips:book');
    const { location } = await op.signIn(asked.href, USER);
    const back = await rp.request(location!);
    expect([back.status, back.headers.get('location')]).toEqual([303, '/#agents']);
    const granted = await home();
    expect(granted).toContain(
      `<p id="agent-granted">You gave the agent a token for <code>${demo.url}/trips</code> with the scope <code>trips:read trips:book</code>.</p>`,
    );

    // narrowed: the delegated token acts for the person (act: the demo app), for the trips API only
    expect((await rp.request('/agents/exchange', { form: { scope: 'trips:read' } })).status).toBe(303);
    const exchanged = await home();
    expect(exchanged).not.toContain('id="agents-error"');
    expect(JSON.parse(byId(exchanged, 'delegated-act')!)).toEqual({ sub: demo.appId });
    expect(byId(exchanged, 'delegated-aud')).toBe(`${demo.url}/trips`);
    expect(byId(exchanged, 'delegated-scope')).toBe('trips:read');
    expect(byId(exchanged, 'delegated-acr')).toBe('urn:attest:loa:orb');
    expect(byId(exchanged, 'delegated-introspection')).toBe(`active: true, act: {"sub":"${demo.appId}"}`);
    expect(exchanged).toContain('<code>urn:ietf:params:oauth:token-type:access_token</code>');

    // all the person gave: kept
    await rp.request('/agents/exchange', { form: { scope: 'trips:read trips:book' } });
    expect(byId(await home(), 'delegated-scope')).toBe('trips:read trips:book');

    // wider than the person gave: Attest refuses it, and the demo says so
    await rp.request('/agents/exchange', { form: { scope: 'trips:read payments:make' } });
    const widened = await home();
    expect(byId(widened, 'agents-error')).toMatch(/^The exchange was refused: invalid_scope: scope payments:make/);
    expect(widened).not.toContain('id="delegated"');

    // a scope the form does not offer: refused by the demo, naming the field
    const odd = await rp.request('/agents/exchange', { form: { scope: 'openid' } });
    expect(odd.status).toBe(400);
    expect(await odd.text()).toContain('scope must be one of');

    // the account page lists the agent, with the trips API and its scopes
    const account = await (await op.request('/account')).text();
    expect(account).toContain(`data-agent="${demo.appId}"`);
    expect(account).toContain(`data-resource="${demo.url}/trips"`);
  });

  /** The person's account page, and the pending approval's form fields there. */
  const pendingApproval = async (bindingMessage: string) => {
    const account = await (await op.request('/account')).text();
    const item = /<li data-approval="(bcr_[0-9a-f]+)">([^]*?)<\/div><\/li>/.exec(account);
    expect(item).not.toBeNull();
    expect(item![2]).toContain(`<strong data-binding-message>${bindingMessage}</strong>`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(item![2])![1];
    return { requestId: item![1], csrf, item: item![2] };
  };
  /** The demo page once the payment is no longer pending (its agent polls Attest every few seconds). */
  const decided = async () => {
    for (let i = 0; i < 60; i++) {
      const page = await home();
      if (!page.includes('data-state="pending"')) return page;
      await sleep(500);
    }
    throw new Error('the payment stayed pending');
  };

  it('the agent asks the person to approve a payment; approved on the account page, the demo shows what was approved', async () => {
    expect((await rp.request('/agents/payment', { form: {} })).status).toBe(303);
    const pending = await home();
    expect(pending).toContain('id="payment-state" data-state="pending"');
    // it links to where the person decides, and back to itself (no timed reload: WCAG 2.2.1)
    expect(pending).toContain(`id="approve-link" href="${issuer}/account#approvals"`);
    expect(pending).toContain('<form method="post" action="/agents/check">');
    const check = await rp.request('/agents/check', { form: {} });
    expect([check.status, check.headers.get('location')]).toEqual([303, '/#agents']);
    const bindingMessage = byId(pending, 'payment-binding')!;
    expect(bindingMessage).toMatch(/^DEMO-[0-9]{4}$/);
    const asked = byId(pending, 'payment-detail')!;
    expect(asked).toMatch(/^Pay 42\.50 EUR to Demo Travel \(reference: TRIP-[0-9]{4}\)$/);
    const reference = /TRIP-[0-9]{4}/.exec(asked)![0];

    // Attest shows it in words on the account page; the person approves with their password
    const { requestId, csrf, item } = await pendingApproval(bindingMessage);
    expect(item).toContain(
      `<li data-detail-type="payment">Pay 42.50 EUR to Demo Travel (reference: ${reference})</li>`,
    );
    const approve = await op.request('/account/approvals/approve', {
      form: { csrf, request_id: requestId, password: PASSWORD },
    });
    expect([approve.status, approve.headers.get('location')]).toEqual([303, '/account?approval=approved#approvals']);

    const page = await decided();
    expect(page).toContain('id="payment-state" data-state="approved"');
    expect(JSON.parse(byId(page, 'payment-approved')!)).toEqual([
      { type: 'payment', amount: '42.50', currency: 'EUR', payee: 'Demo Travel', reference },
    ]);
    expect(byId(page, 'payment-acr')).toBe('urn:attest:loa:orb');
    expect(byId(page, 'payment-approved-at')).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(page).not.toContain('id="payment-refresh"');
  });

  it('denied on the account page, the demo shows access_denied', async () => {
    await rp.request('/agents/payment', { form: {} });
    const bindingMessage = byId(await home(), 'payment-binding')!;
    const { requestId, csrf } = await pendingApproval(bindingMessage);
    const deny = await op.request('/account/approvals/deny', { form: { csrf, request_id: requestId } });
    expect(deny.status).toBe(303);
    const page = await decided();
    expect(page).toContain('id="payment-state" data-state="denied"');
    expect(byId(page, 'payment-error')).toMatch(/^access_denied: /);
    expect(page).not.toContain('id="payment-approved"');
  });

  it('offers none of it to a visitor who is not signed in', async () => {
    const visitor = new Browser(demo.url);
    const page = await (await visitor.request('/')).text();
    expect(page).not.toContain('id="agents"');
    for (const [route, form] of [
      ['/agents/exchange', { scope: 'trips:read' }],
      ['/agents/payment', {}],
    ] as const) {
      const res = await visitor.request(route, { form });
      expect([route, res.status, res.headers.get('location')]).toEqual([route, 303, '/']);
    }
    const start = await visitor.request('/agents/authorize');
    expect(start.headers.get('location')).toBe('/');
  });
});
