import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { Browser, type FetchLike } from '../services/identity/test/browser';
import { freePort } from '../packages/common/test/support/throwaway';
import { describeNeeding } from '../packages/common/test/support/binaries';
import { manage, ROOT, stackEnv, startStack } from './support';

const NGINX = '/usr/sbin/nginx';

/** Renders ${NAME} placeholders for the given names only, as envsubst does in the nginx image. */
function renderTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\$\{([A-Z_]+)\}/g, (whole, name: string) => (name in values ? values[name] : whole));
}

describeNeeding(['/usr/sbin/nginx'], 'the nginx gateway in front of the three services', () => {
  let nginx: ChildProcess;
  let stack: Awaited<ReturnType<typeof startStack>>;
  let gatewayPort: number;
  let gw: FetchLike;
  const hosts = { identity: 'id.attest.test', api: 'api.attest.test', prices: 'prices.attest.test' };

  beforeAll(async () => {
    gatewayPort = await freePort();
    const env = await stackEnv({ TRUST_PROXY: 'loopback' });
    env.BASE_URL = `http://${hosts.identity}:${gatewayPort}`;
    env.API_URL = `http://${hosts.api}:${gatewayPort}`;
    env.PRICES_URL = `http://${hosts.prices}:${gatewayPort}`;
    stack = await startStack(env);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attest-gw-'));
    const conf = renderTemplate(fs.readFileSync(path.join(ROOT, 'gateway', 'attest.conf.template'), 'utf8'), {
      GATEWAY_PORT: String(gatewayPort),
      IDENTITY_HOST: hosts.identity,
      API_HOST: hosts.api,
      PRICES_HOST: hosts.prices,
      IDENTITY_UPSTREAM: `127.0.0.1:${env.IDENTITY_PORT}`,
      TRANSACTIONS_UPSTREAM: `127.0.0.1:${env.TRANSACTIONS_PORT}`,
      PRICES_UPSTREAM: `127.0.0.1:${env.PRICES_PORT}`,
    });
    expect(conf).not.toMatch(/\$\{[A-Z_]+\}/);
    fs.writeFileSync(path.join(dir, 'attest.conf'), conf);
    fs.copyFileSync(path.join(ROOT, 'gateway', 'nginx.conf'), path.join(dir, 'nginx.conf'));
    nginx = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    nginx.stderr!.on('data', (d) => (errors += d));

    // every *.attest.test name resolves to this machine; the gateway tells them apart by Host
    const dispatcher = new Agent({
      connect: { lookup: (_host, _opts, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]) },
    });
    gw = ((input: string | URL, init: RequestInit) =>
      undiciFetch(input, { ...(init as object), dispatcher } as Parameters<
        typeof undiciFetch
      >[1])) as unknown as FetchLike;
    const deadline = Date.now() + 10000;
    for (;;) {
      try {
        if ((await gw(`http://${hosts.identity}:${gatewayPort}/healthz`, {})).ok) break;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline || nginx.exitCode !== null) throw new Error(`nginx did not start: ${errors}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 120000);

  afterAll(async () => {
    nginx?.kill('SIGQUIT');
    await stack?.stop('SIGTERM');
  });

  const url = (host: keyof typeof hosts, p: string) => `http://${hosts[host]}:${gatewayPort}${p}`;

  it('serves discovery by host name with the configured issuer, whatever X-Forwarded-Host says', async () => {
    const res = await gw(url('identity', '/.well-known/openid-configuration'), {
      headers: { 'x-forwarded-host': 'evil.example', 'x-request-id': 'gw-test-1' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('gw-test-1');
    const body = (await res.json()) as { issuer: string; token_endpoint: string };
    expect(body.issuer).toBe(`http://${hosts.identity}:${gatewayPort}`);
    expect(body.token_endpoint).toBe(`http://${hosts.identity}:${gatewayPort}/token`);
    const generated = await gw(url('identity', '/healthz'), {});
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('signs a user in through the gateway with openid-client', async () => {
    const env = stack.env;
    const run = async (...args: string[]) => JSON.parse((await manage(args, env)).stdout) as Record<string, string>;
    const redirect = 'http://localhost:3000/cb';
    const app = await run('app', 'create', '--name', 'Gateway', '--redirect-uri', redirect);
    await run(
      'user',
      'create',
      '--username',
      'gwuser',
      '--password',
      'correct horse battery',
      '--verification-level',
      'device',
    );
    const oidc = await import('openid-client');
    const config = await oidc.discovery(
      new URL(`http://${hosts.identity}:${gatewayPort}`),
      app.app_id,
      undefined,
      oidc.ClientSecretBasic(app.client_secret),
      {
        execute: [oidc.allowInsecureRequests],
        [oidc.customFetch]: gw as never,
      },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const authUrl = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirect,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const { location } = await new Browser(`http://${hosts.identity}:${gatewayPort}`, gw).signIn(authUrl.toString(), {
      username: 'gwuser',
      password: 'correct horse battery',
    });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(location!), {
      pkceCodeVerifier: verifier,
      idTokenExpected: true,
    });
    expect(tokens.claims()![`http://${hosts.identity}:${gatewayPort}/v1`]).toEqual({ verification_level: 'device' });

    const tx = await run(
      'transaction',
      'record',
      '--app-id',
      app.app_id,
      '--type',
      'pay',
      '--reference',
      'gw-1',
      '--from',
      `0x${'1'.repeat(40)}`,
      '--to',
      `0x${'2'.repeat(40)}`,
      '--chain',
      'worldchain',
      '--token',
      'WLD',
      '--token-amount',
      '42',
    );
    const lookup = await gw(
      url('api', `/api/v2/client/transaction/${tx.transaction_id}?app_id=${app.app_id}&type=pay`),
      { headers: { authorization: `Bearer ${app.api_key}` } },
    );
    expect(lookup.status).toBe(200);
    expect(((await lookup.json()) as Record<string, string>).reference).toBe('gw-1');
    // the x402 facilitator API is the transactions service's too (here without a chain: x402_unavailable)
    const supported = await gw(url('api', '/x402/supported'), { headers: { authorization: `Bearer ${app.api_key}` } });
    expect(supported.status).toBe(503);
    expect(((await supported.json()) as Record<string, string>).code).toBe('x402_unavailable');
    // the customer's payment page is the transactions service's (its JSON 404 for an unknown request, not nginx's)
    const page = await gw(url('api', `/pay/pr_${'0'.repeat(32)}`), {});
    expect(page.status).toBe(404);
    expect(((await page.json()) as Record<string, string>).code).toBe('not_found');
    const script = await gw(url('api', '/pay/assets/checkout.js'), {});
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('javascript');
  });

  it('serves prices by host name with CORS', async () => {
    const res = await gw(url('prices', '/public/v1/prices/latest/wld?fiatCurrencies=USD'), {
      headers: { origin: 'https://widget.example' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(
      ((await res.json()) as { result: { prices: { WLD: { USD: { amount: string } } } } }).result.prices.WLD.USD.amount,
    ).toBe('1510763');
  });

  it('never routes admin paths, and serves only each host’s own API', async () => {
    expect((await gw(url('identity', '/admin/apps'), {})).status).toBe(404);
    expect((await gw(url('api', '/admin/transactions'), {})).status).toBe(404);
    expect((await gw(url('prices', '/admin/prices'), { method: 'POST' })).status).toBe(404);
    expect((await gw(url('api', '/.well-known/openid-configuration'), {})).status).toBe(404);
    expect((await gw(url('prices', '/authorize'), {})).status).toBe(404);
    for (const host of ['identity', 'api', 'prices'] as const)
      expect((await gw(url(host, '/openapi.json'), {})).status).toBe(200);
    await expect(gw(`http://unknown.attest.test:${gatewayPort}/healthz`, {})).rejects.toThrow();
  });

  it('limits request bodies', async () => {
    const res = await gw(url('identity', '/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'x='.padEnd(200000, 'a'),
    });
    expect(res.status).toBe(413);
  });
});
