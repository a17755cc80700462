import { Browser } from '../services/identity/test/browser';
import { manage, stackEnv, startStack } from './support';

type Json = Record<string, string>;

/** The README's path, as a new user takes it: pnpm start, then pnpm manage, then real clients. */
describe('quick start: pnpm start + pnpm manage + real clients', () => {
  it('signs a user in with openid-client, answers payment lookups, serves and updates prices, and keeps it all across a restart', async () => {
    const env = await stackEnv();
    let stack = await startStack(env);
    const run = async (...args: string[]) => {
      const result = await manage(args, env);
      if (result.code !== 0) throw new Error(`manage ${args.join(' ')} failed: ${result.stderr}`);
      return JSON.parse(result.stdout) as Json;
    };
    try {
      const redirect = 'http://localhost:3000/callback';
      const app = await run('app', 'create', '--name', 'Quickstart', '--redirect-uri', redirect);
      expect(Object.keys(app).sort()).toEqual(['api_key', 'app_id', 'client_secret', 'redirect_uris']);
      const user = await run(
        'user',
        'create',
        '--username',
        'alice',
        '--password',
        'correct horse battery',
        '--verification-level',
        'orb',
        '--name',
        'Alice',
      );
      expect(user).toMatchObject({ username: 'alice', verification_level: 'orb' });

      // a standard OpenID Connect client signs alice in on the first try
      const oidc = await import('openid-client');
      const config = await oidc.discovery(
        new URL(stack.urls.identity),
        app.app_id,
        undefined,
        oidc.ClientSecretBasic(app.client_secret),
        { execute: [oidc.allowInsecureRequests] },
      );
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirect,
        scope: 'openid profile',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      });
      const { location } = await new Browser(stack.urls.identity).signIn(url.toString(), {
        username: 'alice',
        password: 'correct horse battery',
      });
      const tokens = await oidc.authorizationCodeGrant(config, new URL(location!), {
        pkceCodeVerifier: verifier,
        expectedState: state,
      });
      const claims = tokens.claims()!;
      expect(claims[`${stack.urls.identity}/v1`]).toEqual({ verification_level: 'orb' });
      expect(claims.name).toBe('Alice');

      // a merchant backend checks a payment
      const tx = await run(
        'transaction',
        'record',
        '--app-id',
        app.app_id,
        '--type',
        'pay',
        '--reference',
        'order-1',
        '--from',
        `0x${'1'.repeat(40)}`,
        '--to',
        `0x${'2'.repeat(40)}`,
        '--chain',
        'worldchain',
        '--token',
        'USDCE',
        '--token-amount',
        '1500000',
      );
      const lookup = (key: string | null, appId = app.app_id) =>
        fetch(`${stack.urls.transactions}/api/v2/client/transaction/${tx.transaction_id}?app_id=${appId}&type=pay`, {
          headers: key ? { authorization: `Bearer ${key}` } : {},
        });
      let res = await lookup(app.api_key);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        reference: 'order-1',
        transaction_status: 'pending',
        token_amount: '1500000',
      });
      expect((await run('transaction', 'set-status', tx.transaction_id, 'mined')).transaction_status).toBe('mined');
      res = await lookup(app.api_key);
      expect(((await res.json()) as Json).transaction_status).toBe('mined');
      const other = await run('app', 'create', '--name', 'Other', '--redirect-uri', redirect);
      expect((await lookup(other.api_key)).status).toBe(403);
      expect((await lookup(other.api_key, other.app_id)).status).toBe(404);
      expect((await lookup(null)).status).toBe(401);

      // a widget reads four prices right away, and an operator's price shows at the next request
      const prices = await fetch(
        `${stack.urls.prices}/public/v1/prices/latest/wld?fiatCurrencies=USD,EUR&cryptoCurrencies=WLD,USDCE`,
      );
      const body = (await prices.json()) as { result: { prices: Record<string, Record<string, unknown>> } };
      expect(Object.values(body.result.prices).flatMap((p) => Object.keys(p))).toHaveLength(4);
      expect(await run('price', 'set', '--token', 'WLD', '--fiat', 'USD', '--amount', '1.510763')).toEqual({
        token: 'WLD',
        fiat: 'USD',
        amount: '1510763',
        decimals: 6,
      });

      // bad input: a clear message and a non-zero exit
      const bad = await manage(['transaction', 'set-status', tx.transaction_id, 'failed'], env);
      expect(bad.code).toBe(1);
      expect(bad.stdout).toBe('');
      expect(bad.stderr).toContain('cannot become failed');

      // Ctrl-C, start again: the same app, key and transaction
      expect((await stack.stop('SIGINT')).code).toBe(0);
      stack = await startStack(env);
      res = await lookup(app.api_key);
      expect(((await res.json()) as Json).transaction_status).toBe('mined');
      const again = await fetch(
        `${stack.urls.identity}/authorize?client_id=${app.app_id}&redirect_uri=${encodeURIComponent(redirect)}&response_type=code&scope=openid`,
        { redirect: 'manual' },
      );
      expect(again.status).toBe(302);
      expect(again.headers.get('location')).toMatch(/^\/signin\?interaction=/);
    } finally {
      await stack.stop('SIGTERM');
    }
  }, 180000);
});
