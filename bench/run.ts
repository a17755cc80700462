/**
 * `pnpm bench`: starts the three services (embedded storage, its own ports and data directory),
 * seeds an app, a key, a transaction and a token, then drives each scenario from this process over
 * loopback with a fixed concurrency for a fixed time, and prints requests/s and latency percentiles.
 * Bounded: BENCH_SECONDS per scenario (default 5), BENCH_CONCURRENCY (default 16), loopback only.
 */
import { performance } from 'node:perf_hooks';
import { manage, stackEnv, startStack } from '../test/support';
import { Browser } from '../services/identity/test/browser';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

interface Scenario {
  name: string;
  request(): Promise<Response>;
}

async function drive(scenario: Scenario): Promise<{ name: string; requests: number; errors: number; rps: number; p50: number; p99: number }> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          const res = await scenario.request();
          await res.arrayBuffer();
          if (!res.ok) errors++;
        } catch {
          errors++;
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pick = (q: number) => Number(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(2));
  return { name: scenario.name, requests: latencies.length, errors, rps: Math.round(latencies.length / SECONDS), p50: pick(0.5), p99: pick(0.99) };
}

async function main(): Promise<void> {
  const env = await stackEnv({ LOG_LEVEL: 'error' });
  const stack = await startStack(env);
  try {
    const run = async (...args: string[]) => JSON.parse((await manage(args, env)).stdout) as Record<string, string>;
    const redirect = 'http://localhost:3000/cb';
    const app = await run('app', 'create', '--name', 'Bench', '--redirect-uri', redirect);
    await run('user', 'create', '--username', 'bench', '--password', 'correct horse battery', '--verification-level', 'orb');
    const tx = await run('transaction', 'record', '--app-id', app.app_id, '--type', 'pay', '--reference', 'bench-1', '--from', `0x${'1'.repeat(40)}`, '--to', `0x${'2'.repeat(40)}`, '--chain', 'worldchain', '--token', 'USDCE', '--token-amount', '1000000');
    const browser = new Browser(stack.urls.identity);
    const { location } = await browser.signIn(`${stack.urls.identity}/authorize?response_type=code&scope=openid&client_id=${app.app_id}&redirect_uri=${encodeURIComponent(redirect)}`, { username: 'bench', password: 'correct horse battery' });
    const code = new URL(location!).searchParams.get('code')!;
    const basic = `Basic ${Buffer.from(`${app.app_id}:${app.client_secret}`).toString('base64')}`;
    const tokenRes = await fetch(`${stack.urls.identity}/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirect }) });
    const { access_token: accessToken } = (await tokenRes.json()) as { access_token: string };

    const scenarios: Scenario[] = [
      { name: 'GET /.well-known/openid-configuration', request: () => fetch(`${stack.urls.identity}/.well-known/openid-configuration`) },
      { name: 'GET /jwks', request: () => fetch(`${stack.urls.identity}/jwks`) },
      { name: 'GET /userinfo (Bearer)', request: () => fetch(`${stack.urls.identity}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } }) },
      { name: 'POST /introspect (Basic)', request: () => fetch(`${stack.urls.identity}/introspect`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${accessToken}` }) },
      { name: 'GET /api/v2/client/transaction/{id}', request: () => fetch(`${stack.urls.transactions}/api/v2/client/transaction/${tx.transaction_id}?app_id=${app.app_id}&type=pay`, { headers: { authorization: `Bearer ${app.api_key}` } }) },
      { name: 'GET /public/v1/prices/latest/wld (4 prices)', request: () => fetch(`${stack.urls.prices}/public/v1/prices/latest/wld?fiatCurrencies=USD,EUR&cryptoCurrencies=WLD,USDCE`) },
    ];
    const results = [];
    for (const scenario of scenarios) results.push(await drive(scenario));
    process.stdout.write(`\nAttest benchmark: embedded storage, ${CONCURRENCY} concurrent clients, ${SECONDS} s per scenario, one process for all three services\n\n`);
    process.stdout.write('| scenario | requests | errors | req/s | p50 ms | p99 ms |\n|---|---|---|---|---|---|\n');
    for (const r of results) process.stdout.write(`| ${r.name} | ${r.requests} | ${r.errors} | ${r.rps} | ${r.p50} | ${r.p99} |\n`);
  } finally {
    await stack.stop('SIGTERM');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack}\n`);
  process.exitCode = 1;
});
