import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { AddressInfo } from 'node:net';
import { CliError } from '../src/admin-client';
import { commands } from '../src/commands';
import { HelpText, runCli } from '../src/main';
import { ADMIN_TOKEN, identityHarness, type IdentityHarness } from '../../../services/identity/test/support';
import { pricesHarness, type PricesHarness } from '../../../services/prices/test/support';
import { transactionsHarness, type TransactionsHarness } from '../../../services/transactions/test/support';
import { manage as manageProcess } from '../../../test/support';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed CLI output in a test

const ADDRESS = `0x${'a'.repeat(40)}`;

describe('pnpm manage --help', () => {
  const failure = async (args: string[]) => {
    const err = await runCli(args, {}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CliError);
    return (err as CliError).message;
  };

  it('lists every command with a summary', async () => {
    const help = await runCli(['--help'], {});
    expect(help).toBeInstanceOf(HelpText);
    for (const name of Object.keys(commands)) expect((help as HelpText).text).toContain(`  ${name} `);
    expect(Object.keys(commands)).toEqual(
      expect.arrayContaining([
        'app update',
        'user delete',
        'user reset-password',
        'signing-key rotate',
        'transaction list',
        'price feeds',
        'audit list',
        'admin-token create',
      ]),
    );
  });

  it('lists a noun’s commands with their flags, and one command’s usage and options', async () => {
    const noun = (await runCli(['user', '--help'], {})) as HelpText;
    expect(noun.text).toContain('pnpm manage user list [--username PREFIX] [--limit N] [--cursor CURSOR]');
    expect(noun.text).toContain('pnpm manage user withdraw-consent USER_ID APP_ID');
    expect(noun.text).not.toContain('app create');
    const one = (await runCli(['app', 'update', '--help'], {})) as HelpText;
    expect(one.text).toMatch(
      /^Usage: pnpm manage app update APP_ID \[--name NAME\] \[--redirect-uri URI\] \[--redirect-uri URI \.\.\.\]/,
    );
    expect(one.text).toMatch(/--redirect-uri URI\s+the new redirect URIs; repeat for more \(repeatable\)/);
    for (const flag of [
      '--auth-method METHOD',
      '--jwks-file FILE',
      '--jwks-uri URI',
      '--require-par',
      '--id-token-alg ALG',
    ])
      expect(one.text).toContain(flag);
    expect(((await runCli(['audit', 'list', '-h'], {})) as HelpText).text).toContain('--since TIME');
    expect(one.text).toMatch(/--min-verification-level orb\|device\|none\s+sign-in refuses people below this level/);
    expect(((await runCli(['app', 'create', '--help'], {})) as HelpText).text).toContain(
      '--min-verification-level orb|device|none',
    );
  });

  it('names unknown commands and missing arguments', async () => {
    expect(await failure(['app', 'explode'])).toMatch(/^Unknown command: app explode/);
    expect(await failure(['user', 'create', '--username', 'x'])).toMatch(
      /^Missing --password, --verification-level\nUsage: pnpm manage user create/,
    );
    expect(await failure(['user', 'disable'])).toMatch(/^Expected USER_ID/);
    expect(await failure(['app', 'show', 'a', '--bogus'])).toMatch(/Unknown option '--bogus'/);
  });
});

/** `pnpm manage` against the three admin APIs, each listening on a free port; every command, in process. */
describe('pnpm manage', () => {
  let identity: IdentityHarness;
  let transactions: TransactionsHarness;
  let prices: PricesHarness;
  const servers: Server[] = [];
  let env: NodeJS.ProcessEnv;

  const listen = (app: IdentityHarness['adminApp']) =>
    new Promise<string>((resolve) => {
      const server = app.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
      );
      servers.push(server);
    });

  beforeAll(async () => {
    identity = await identityHarness();
    transactions = await transactionsHarness();
    prices = await pricesHarness();
    env = {
      ADMIN_TOKEN,
      IDENTITY_ADMIN_URL: await listen(identity.adminApp),
      TRANSACTIONS_ADMIN_URL: await listen(transactions.adminApp),
      PRICES_ADMIN_URL: await listen(prices.adminApp),
    };
  }, 300000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    await Promise.all([identity?.close(), transactions?.close(), prices?.close()]);
  });

  const manage = async (args: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
    (await runCli(args, { ...env, ...extraEnv })) as Json;
  const failure = async (args: string[], extraEnv: NodeJS.ProcessEnv = {}) => {
    const err = await runCli(args, { ...env, ...extraEnv }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CliError);
    return (err as CliError).message;
  };

  it('apps: --dpop-required at create and update (dpop_bound_access_tokens), shown in --help', async () => {
    const help = ((await runCli(['app', 'create', '--help'], {})) as HelpText).text;
    expect(help).toMatch(/--dpop-required\s+DPoP required/);
    expect(((await runCli(['app', 'update', '--help'], {})) as HelpText).text).toContain('--no-dpop-required');
    const created = await manage([
      'app',
      'create',
      '--name',
      'DPoP app',
      '--redirect-uri',
      'https://dpop.example/cb',
      '--dpop-required',
    ]);
    const id = created.app_id as string;
    expect((await manage(['app', 'show', id])).dpop_bound_access_tokens).toBe(true);
    expect((await manage(['app', 'update', id, '--no-dpop-required'])).dpop_bound_access_tokens).toBe(false);
    expect((await manage(['app', 'update', id, '--dpop-required'])).dpop_bound_access_tokens).toBe(true);
    expect(await failure(['app', 'update', id, '--dpop-required', '--no-dpop-required'])).toMatch(/not both/);
    const plain = await manage(['app', 'create', '--name', 'Plain', '--redirect-uri', 'https://plain.example/cb']);
    expect((await manage(['app', 'show', plain.app_id])).dpop_bound_access_tokens).toBe(false);
  });

  it('apps: --device-flow at create and update (device_authorization_grant, issue 41), shown in --help', async () => {
    expect(((await runCli(['app', 'create', '--help'], {})) as HelpText).text).toMatch(
      /--device-flow\s+allow the device flow/,
    );
    expect(((await runCli(['app', 'update', '--help'], {})) as HelpText).text).toContain('--no-device-flow');
    const created = await manage([
      'app',
      'create',
      '--name',
      'Terminal',
      '--redirect-uri',
      'https://terminal.example/cb',
      '--public',
      '--device-flow',
    ]);
    expect(created.device_authorization_grant).toBe(true);
    const id = created.app_id as string;
    expect((await manage(['app', 'show', id])).device_authorization_grant).toBe(true);
    expect((await manage(['app', 'update', id, '--no-device-flow'])).device_authorization_grant).toBe(false);
    expect((await manage(['app', 'update', id, '--device-flow'])).device_authorization_grant).toBe(true);
    expect(await failure(['app', 'update', id, '--device-flow', '--no-device-flow'])).toMatch(/not both/);
    const plain = await manage([
      'app',
      'create',
      '--name',
      'No device',
      '--redirect-uri',
      'https://nodevice.example/cb',
    ]);
    expect((await manage(['app', 'show', plain.app_id])).device_authorization_grant).toBe(false);
  });

  it('apps: --may-act-for-users at create and update (issue 42, may_act_for_users), in list and show and --help', async () => {
    expect(((await runCli(['app', 'create', '--help'], {})) as HelpText).text).toMatch(
      /--may-act-for-users\s+an agent: it may exchange/,
    );
    expect(((await runCli(['app', 'update', '--help'], {})) as HelpText).text).toContain('--no-may-act-for-users');
    const created = await manage([
      'app',
      'create',
      '--name',
      'Agent',
      '--redirect-uri',
      'https://agent.example/cb',
      '--may-act-for-users',
    ]);
    expect(created.may_act_for_users).toBe(true);
    const id = created.app_id as string;
    expect((await manage(['app', 'show', id])).may_act_for_users).toBe(true);
    const listed = await manage(['app', 'list', '--limit', '1000']);
    expect(listed.apps.find((a: Json) => a.app_id === id)?.may_act_for_users).toBe(true);
    expect((await manage(['app', 'update', id, '--no-may-act-for-users'])).may_act_for_users).toBe(false);
    expect((await manage(['app', 'update', id, '--may-act-for-users'])).may_act_for_users).toBe(true);
    expect(await failure(['app', 'update', id, '--may-act-for-users', '--no-may-act-for-users'])).toMatch(/not both/);
    const plain = await manage(['app', 'create', '--name', 'Not an agent', '--redirect-uri', 'https://n.example/cb']);
    expect(plain.may_act_for_users).toBeUndefined();
    expect((await manage(['app', 'show', plain.app_id])).may_act_for_users).toBe(false);
  });

  it('apps: --profile fapi2 at create and update sets what FAPI 2.0 requires, none lifts it; shown in --help', async () => {
    for (const command of ['create', 'update'])
      expect(((await runCli(['app', command, '--help'], {})) as HelpText).text).toMatch(
        /--profile fapi2\|none\s+fapi2: the FAPI 2\.0 profile \(PAR, PKCE S256/,
      );
    const jwksFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attest-cli-fapi-')), 'keys.json');
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    fs.writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'fapi-1' }] }));
    const created = await manage([
      'app',
      'create',
      '--name',
      'FAPI bank',
      '--redirect-uri',
      'https://bank.example/cb',
      '--jwks-file',
      jwksFile,
      '--profile',
      'fapi2',
    ]);
    expect(created).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', profile: 'fapi2' });
    expect(created.client_secret).toBeUndefined();
    expect(await manage(['app', 'show', created.app_id])).toMatchObject({
      profile: 'fapi2',
      require_pushed_authorization_requests: true,
      dpop_bound_access_tokens: true,
      id_token_signed_response_alg: 'PS256',
    });
    expect(await failure(['app', 'update', created.app_id, '--no-dpop-required'])).toMatch(
      /fapi2 profile requires dpop_bound_access_tokens true.*\(dpop_bound_access_tokens\) \[invalid_parameter\]/,
    );
    const lifted = await manage(['app', 'update', created.app_id, '--profile', 'none']);
    expect(lifted).toMatchObject({ profile: 'none', dpop_bound_access_tokens: true });
    expect((await manage(['app', 'update', created.app_id, '--no-dpop-required'])).dpop_bound_access_tokens).toBe(
      false,
    );
    expect(
      await failure([
        'app',
        'create',
        '--name',
        'Local bank',
        '--redirect-uri',
        'http://localhost:3000/cb',
        '--jwks-file',
        jwksFile,
        '--profile',
        'fapi2',
      ]),
    ).toMatch(/redirect_uris must use https under the fapi2 profile.*\(redirect_uris\) \[invalid_parameter\]/);
  });

  it('apps: create, list, show, update, disable, enable, rotate the secret', async () => {
    const created = await manage(['app', 'create', '--name', 'CLI app', '--redirect-uri', 'https://cli.example/cb']);
    expect(created).toMatchObject({
      app_id: expect.stringMatching(/^app_/),
      client_secret: expect.stringMatching(/^sk_/),
      api_key: expect.stringMatching(/^api_/),
    });
    const id = created.app_id as string;
    const list = await manage(['app', 'list', '--limit', '1000']);
    expect(list.apps.map((a: Json) => a.app_id)).toContain(id);
    expect((await manage(['app', 'show', id])).name).toBe('CLI app');
    const updated = await manage([
      'app',
      'update',
      id,
      '--name',
      'Renamed',
      '--redirect-uri',
      'https://a.example/cb',
      '--redirect-uri',
      'https://b.example/cb',
    ]);
    expect(updated).toMatchObject({ name: 'Renamed', redirect_uris: ['https://a.example/cb', 'https://b.example/cb'] });
    expect(await failure(['app', 'update', id])).toMatch(/Nothing to change/);
    // high-assurance settings (issue 24): the app's keys from a file, PAR required, ES256 id_tokens
    const jwksFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attest-cli-jwks-')), 'keys.json');
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    fs.writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'cli-1' }] }));
    const assured = await manage([
      'app',
      'update',
      id,
      '--auth-method',
      'private_key_jwt',
      '--jwks-file',
      jwksFile,
      '--require-par',
      '--id-token-alg',
      'ES256',
    ]);
    expect(assured).toMatchObject({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [expect.objectContaining({ kid: 'cli-1', kty: 'EC' })] },
      require_pushed_authorization_requests: true,
      id_token_signed_response_alg: 'ES256',
    });
    const relaxed = await manage(['app', 'update', id, '--no-require-par', '--auth-method', 'client_secret_basic']);
    expect(relaxed).toMatchObject({
      require_pushed_authorization_requests: false,
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret: expect.stringMatching(/^sk_/),
    });
    expect((await manage(['app', 'update', id, '--min-verification-level', 'orb'])).min_verification_level).toBe('orb');
    expect((await manage(['app', 'update', id, '--min-verification-level', 'none'])).min_verification_level).toBeNull();
    expect(await failure(['app', 'update', id, '--min-verification-level', 'retina'])).toMatch(
      /min_verification_level.*\[invalid_parameter\]/,
    );
    const strict = await manage([
      'app',
      'create',
      '--name',
      'Orb only',
      '--redirect-uri',
      'https://orb.example/cb',
      '--min-verification-level',
      'orb',
    ]);
    expect(strict.min_verification_level).toBe('orb');
    expect(await failure(['app', 'update', id, '--redirect-uri', 'http://evil.example/cb'])).toMatch(
      /must use https.*\(redirect_uris\.0\) \[invalid_parameter\]/,
    );
    expect((await manage(['app', 'disable', id])).disabled).toBe(true);
    const [row] = await identity.storage.db.query<{ disabled_at: Date | null }>(
      'SELECT disabled_at FROM apps WHERE id = $1',
      [id],
    );
    expect(row.disabled_at).not.toBeNull();
    expect((await manage(['app', 'enable', id])).disabled).toBe(false);
    const rotated = await manage(['app', 'rotate-secret', id]);
    expect(rotated.client_secret).not.toBe(created.client_secret);
    expect(await failure(['app', 'show', 'app_00000000000000000000000000000000'])).toMatch(
      /No app with this app_id\. \(app_id\) \[not_found\]/,
    );
  });

  it('app payment-policy shows and sets the amount policy of payment requests', async () => {
    const id = `app_${'c'.repeat(32)}`;
    expect(await manage(['app', 'payment-policy', '--app-id', id])).toEqual({
      app_id: id,
      underpayment_tolerance_percent: '0',
      flag_overpayment: true,
      default_expires_in: 900,
      display_name: null,
      return_origins: [],
    });
    expect(
      await manage([
        'app',
        'payment-policy',
        '--app-id',
        id,
        '--underpayment-tolerance',
        '2.5',
        '--flag-overpayment',
        'false',
        '--default-expires-in',
        '600',
      ]),
    ).toEqual({
      app_id: id,
      underpayment_tolerance_percent: '2.5',
      flag_overpayment: false,
      default_expires_in: 600,
      display_name: null,
      return_origins: [],
    });
    expect(await manage(['app', 'payment-policy', '--app-id', id, '--underpayment-tolerance', '1'])).toMatchObject({
      underpayment_tolerance_percent: '1',
      flag_overpayment: false,
    });
    expect(await failure(['app', 'payment-policy', '--app-id', id, '--underpayment-tolerance', '60'])).toMatch(
      /underpayment_tolerance_percent must be a number from 0 to 50/,
    );
    expect(await failure(['app', 'payment-policy', '--app-id', id, '--flag-overpayment', 'maybe'])).toBe(
      '--flag-overpayment must be true or false',
    );
  });

  it('app disable stops the app’s API keys and webhooks too; app enable brings them back', async () => {
    const created = await manage(['app', 'create', '--name', 'Stopped', '--redirect-uri', 'https://stop.example/cb']);
    const id = created.app_id as string;
    const lookup = () =>
      request(transactions.publicApp)
        .get(`/api/v2/client/transaction/0x${'0'.repeat(64)}`)
        .query({ app_id: id, type: 'pay' })
        .set('Authorization', `Bearer ${created.api_key}`);
    expect((await lookup()).status).toBe(404);
    expect((await manage(['app', 'disable', id])).disabled).toBe(true);
    const refused = await lookup();
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toMatch(/app is disabled/);
    expect((await transactions.admin('get', `/apps/${id}`)).body).toMatchObject({ app_id: id, disabled: true });
    expect((await manage(['app', 'enable', id])).disabled).toBe(false);
    expect((await lookup()).status).toBe(404);
    // the transactions service unreachable: identity's part is done, and the message says how to finish
    expect(await failure(['app', 'disable', id], { TRANSACTIONS_ADMIN_URL: 'http://127.0.0.1:9' })).toBe(
      `App ${id} was disabled (no new tokens), but its API keys and webhooks were not disabled: ` +
        'Cannot reach the transactions admin API at http://127.0.0.1:9/admin/apps/' +
        `${id}/disable: is the service running (pnpm start)?. Run: pnpm manage app disable ${id}`,
    );
    expect((await lookup()).status).toBe(404);
    expect((await manage(['app', 'disable', id])).disabled).toBe(true);
    expect((await lookup()).status).toBe(401);
  });

  it('app members: add, change a role, list, remove; the last owner stays', async () => {
    const app = await manage(['app', 'create', '--name', 'Team app', '--redirect-uri', 'https://team.example/cb']);
    const id = app.app_id as string;
    const [ada, bob] = ['ada-team', 'bob-team'];
    for (const username of [ada, bob])
      await manage([
        'user',
        'create',
        '--username',
        username,
        '--password',
        'correct horse battery',
        '--verification-level',
        'orb',
      ]);
    expect(await manage(['app', 'add-member', '--app-id', id, '--username', ada, '--role', 'owner'])).toMatchObject({
      app_id: id,
      username: ada,
      role: 'owner',
    });
    await manage(['app', 'add-member', '--app-id', id, '--username', bob, '--role', 'viewer']);
    await manage(['app', 'add-member', '--app-id', id, '--username', bob, '--role', 'developer']);
    const listed = (await manage(['app', 'list-members', '--app-id', id])) as unknown as {
      username: string;
      role: string;
    }[];
    expect(listed.map((m) => [m.username, m.role])).toEqual([
      [ada, 'owner'],
      [bob, 'developer'],
    ]);
    expect(await failure(['app', 'remove-member', '--app-id', id, '--username', ada])).toContain('[last_owner]');
    expect(await failure(['app', 'add-member', '--app-id', id, '--username', bob, '--role', 'boss'])).toContain('role');
    expect(await manage(['app', 'remove-member', '--app-id', id, '--username', bob])).toEqual({
      app_id: id,
      username: bob,
      removed: true,
    });
    expect(await failure(['app', 'remove-member', '--app-id', id, '--username', bob])).toContain('is not a member');
  });

  it('API keys: create, list, revoke', async () => {
    const appId = `app_${'1'.repeat(32)}`;
    const key = await manage(['api-key', 'create', '--app-id', appId, '--name', 'backend']);
    expect(key).toMatchObject({ api_key: expect.stringMatching(/^api_/), key_id: expect.any(String), name: 'backend' });
    expect((await manage(['api-key', 'list', '--app-id', appId])) as unknown).toEqual([
      expect.objectContaining({ key_id: key.key_id, revoked_at: null }),
    ]);
    expect((await manage(['api-key', 'revoke', key.key_id])).revoked_at).toEqual(expect.any(String));
  });

  it('receiving addresses: add (audited, with its operator), list, remove; one app per address; --help (issue 40, item 1)', async () => {
    const [appId, other] = [`app_${'7'.repeat(32)}`, `app_${'8'.repeat(32)}`];
    const address = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
    const added = await manage([
      'receiving-address',
      'add',
      '--app-id',
      appId,
      '--chain',
      'worldchain',
      '--address',
      address,
    ]);
    expect(added).toEqual({
      app_id: appId,
      chain: 'worldchain',
      address: address.toLowerCase(),
      proof: 'operator',
      created_at: expect.any(String),
    });
    expect(
      await failure(['receiving-address', 'add', '--app-id', other, '--chain', 'worldchain', '--address', address]),
    ).toMatch(/receiving_address_taken|another app's receiving address/);
    expect(
      await failure(['receiving-address', 'add', '--app-id', appId, '--chain', 'worldchain', '--address', '0x12']),
    ).toMatch(/address must be an address/);
    expect((await manage(['receiving-address', 'list', '--app-id', appId])) as unknown).toEqual([added]);
    expect((await manage(['receiving-address', 'list', '--app-id', appId, '--chain', 'base'])) as unknown).toEqual([]);
    const audit = (await manage([
      'audit',
      'list',
      '--service',
      'transactions',
      '--type',
      'receiving_address.added',
    ])) as unknown as {
      events: { actor: { type: string; id: string }; subject: string; detail: Record<string, string> }[];
    };
    expect(audit.events).toEqual([
      expect.objectContaining({
        actor: expect.objectContaining({ type: 'operator', id: 'admin' }),
        subject: appId,
        detail: { app_id: appId, chain: 'worldchain', address: address.toLowerCase(), proof: 'operator' },
      }),
    ]);
    expect(
      await manage(['receiving-address', 'remove', '--app-id', appId, '--chain', 'worldchain', '--address', address]),
    ).toEqual(added);
    expect((await manage(['receiving-address', 'list', '--app-id', appId])) as unknown).toEqual([]);
    expect(
      await failure(['receiving-address', 'remove', '--app-id', appId, '--chain', 'worldchain', '--address', address]),
    ).toMatch(/not this app's receiving address/);
    const help = (await runCli(['receiving-address', '--help'], {})) as HelpText;
    expect(help.text).toContain('pnpm manage receiving-address add --app-id APP_ID --chain CHAIN --address ADDRESS');
    expect(help.text).toContain('pnpm manage receiving-address list --app-id APP_ID [--chain CHAIN]');
  });

  it('webhooks: add with a filter, update, disable, enable; list shows each endpoint’s status', async () => {
    const appId = `app_${'2'.repeat(32)}`;
    const added = await manage([
      'webhook',
      'add',
      '--app-id',
      appId,
      '--url',
      'https://hooks.example.com/attest',
      '--event',
      'transaction.mined',
      '--event',
      'transaction.failed',
      '--description',
      'orders',
    ]);
    expect(added).toMatchObject({
      enabled_events: ['transaction.mined', 'transaction.failed'],
      description: 'orders',
      status: 'enabled',
      secret: expect.stringMatching(/^whsec_/),
    });
    const id = added.webhook_id as string;
    expect(
      (await manage(['webhook', 'update', id, '--event', 'transaction.*', '--description', ''])) as unknown,
    ).toMatchObject({
      enabled_events: ['transaction.*'],
      description: null,
    });
    expect((await manage(['webhook', 'update', id, '--all-events'])).enabled_events).toEqual([]);
    expect((await manage(['webhook', 'disable', id])).status).toBe('disabled');
    expect((await manage(['webhook', 'list', '--app-id', appId])) as unknown).toEqual([
      expect.objectContaining({ webhook_id: id, status: 'disabled', disabled_reason: 'disabled by an operator' }),
    ]);
    expect((await manage(['webhook', 'enable', id])).status).toBe('enabled');
    expect(await failure(['webhook', 'update', id, '--event', 'transaction.paid'])).toMatch(
      /enabled_events has an unknown event type "transaction.paid".*\(enabled_events\) \[invalid_parameter\]/,
    );
  });

  it('users: create, list, show, update, disable, enable, reset the password, withdraw a consent, delete', async () => {
    const user = await manage([
      'user',
      'create',
      '--username',
      'cli-ada',
      '--password',
      'long enough pw',
      '--verification-level',
      'orb',
      '--name',
      'Ada',
      '--family-name',
      'Lovelace',
    ]);
    const id = user.user_id as string;
    await manage([
      'user',
      'create',
      '--username',
      'cli-bob',
      '--password',
      'long enough pw',
      '--verification-level',
      'device',
    ]);
    const page = await manage(['user', 'list', '--username', 'cli-', '--limit', '1']);
    expect(page.users.map((u: Json) => u.username)).toEqual(['cli-ada']);
    expect(
      (await manage(['user', 'list', '--username', 'cli-', '--cursor', page.next_cursor])).users.map(
        (u: Json) => u.username,
      ),
    ).toEqual(['cli-bob']);
    expect(await manage(['user', 'update', id, '--family-name', '', '--verification-level', 'device'])).toMatchObject({
      name: 'Ada',
      family_name: null,
      verification_level: 'device',
    });
    expect((await manage(['user', 'disable', id])).disabled).toBe(true);
    expect((await manage(['user', 'show', id])).disabled).toBe(true);
    expect((await manage(['user', 'enable', id])).disabled).toBe(false);
    const reset = await manage(['user', 'reset-password', id]);
    expect(reset.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(await manage(['user', 'reset-password', id, '--password', 'another long one'])).toEqual({ user_id: id });
    const app = await manage(['app', 'create', '--name', 'Consented', '--redirect-uri', 'https://c.example/cb']);
    await identity.storage.db.query("INSERT INTO consents (user_id, app_id, scopes) VALUES ($1, $2, '{openid}')", [
      id,
      app.app_id,
    ]);
    expect((await manage(['user', 'show', id])).consents).toEqual([expect.objectContaining({ app_id: app.app_id })]);
    expect(await manage(['user', 'withdraw-consent', id, app.app_id])).toEqual({
      user_id: id,
      app_id: app.app_id,
      withdrawn: true,
    });
    expect((await manage(['user', 'show', id])).consents).toEqual([]);
    expect(await manage(['user', 'delete', id])).toEqual({ user_id: id, deleted: true });
    expect(await identity.storage.db.query('SELECT 1 FROM users WHERE id = $1', [id])).toHaveLength(0);
    expect(await failure(['user', 'delete', id])).toMatch(/\[not_found\]/);
  });

  it('signing keys: list (kid, alg, use of every key), rotate now', async () => {
    const before = await manage(['signing-key', 'list']);
    // issue 40, item 2: every advertised algorithm's key from start, each with kid, alg, use and status
    for (const alg of ['RS256', 'PS256', 'ES256'])
      expect(before.keys.filter((k: Json) => k.alg === alg)).toEqual([
        expect.objectContaining({ kid: expect.stringMatching(/^jwk_/), use: 'sig', status: 'active' }),
      ]);
    const rotated = await manage(['signing-key', 'rotate']);
    const after = await manage(['signing-key', 'list']);
    expect(after.keys.find((k: Json) => k.alg === 'RS256' && k.active).kid).toBe(rotated.kid);
    expect(after.keys.map((k: Json) => k.kid)).toEqual(expect.arrayContaining(before.keys.map((k: Json) => k.kid)));
  });

  it('signing keys: an emergency rotation (--revoke-previous, in --help) unpublishes every earlier key at once', async () => {
    const help = (await runCli(['signing-key', 'rotate', '--help'], {})) as HelpText;
    expect(help.text).toContain('--revoke-previous');
    const before = await manage(['signing-key', 'list']);
    const rotated = await manage(['signing-key', 'rotate', '--revoke-previous']);
    expect(rotated.revoked).toEqual(before.keys.map((k: Json) => k.kid).sort());
    const after = await manage(['signing-key', 'list']);
    // a new key of every algorithm (issue 40, item 2), none of the earlier ones
    expect(after.keys.find((k: Json) => k.alg === 'RS256' && k.active).kid).toBe(rotated.kid);
    expect(after.keys.map((k: Json) => k.alg).sort()).toEqual(['ES256', 'PS256', 'RS256']);
    for (const k of after.keys) expect(before.keys.map((b: Json) => b.kid)).not.toContain(k.kid);
  });

  it('transactions: record, set the status, list by app and status, show with history', async () => {
    const appId = `app_${'2'.repeat(32)}`;
    const args = [
      '--app-id',
      appId,
      '--type',
      'pay',
      '--from',
      ADDRESS,
      '--to',
      ADDRESS,
      '--chain',
      'worldchain',
      '--token',
      'USDCE',
      '--token-amount',
      '1500000',
    ];
    const a = await manage(['transaction', 'record', ...args, '--reference', 'cli-1']);
    const b = await manage(['transaction', 'record', ...args, '--reference', 'cli-2']);
    expect((await manage(['transaction', 'set-status', a.transaction_id, 'mined'])).transaction_status).toBe('mined');
    const pending = await manage(['transaction', 'list', '--app-id', appId, '--status', 'pending']);
    expect(pending.transactions.map((t: Json) => t.transaction_id)).toEqual([b.transaction_id]);
    const shown = await manage(['transaction', 'show', a.transaction_id]);
    expect(shown.history.map((h: Json) => h.to_status)).toEqual(['pending', 'mined']);
    expect(await failure(['transaction', 'set-status', a.transaction_id, 'failed'])).toMatch(/\[invalid_transition\]/);
  });

  it('prices: set one, list the feeds and their freshness', async () => {
    expect(await manage(['price', 'set', '--token', 'WLD', '--fiat', 'EUR', '--amount', '1.5'])).toEqual({
      token: 'WLD',
      fiat: 'EUR',
      amount: '1500000',
      decimals: 6,
    });
    const feeds = await manage(['price', 'feeds']);
    expect(feeds.feeds.map((f: Json) => f.name)).toEqual(['seed', 'manual']);
    expect(feeds.feeds[1].prices.values).toBeGreaterThanOrEqual(1);
  });

  it('audit: lists one service’s trail or all three merged, with filters', async () => {
    await manage(['app', 'create', '--name', 'Audited by CLI', '--redirect-uri', 'https://d.example/cb']);
    const one = await manage(['audit', 'list', '--service', 'identity', '--type', 'app.created', '--limit', '1']);
    expect(one.events).toEqual([
      expect.objectContaining({ service: 'identity', type: 'app.created', actor: { type: 'operator', id: 'admin' } }),
    ]);
    expect(one.next_cursor).toEqual(expect.any(String));
    const next = await manage([
      'audit',
      'list',
      '--service',
      'identity',
      '--type',
      'app.created',
      '--limit',
      '1',
      '--cursor',
      one.next_cursor,
    ]);
    expect(Number(next.events[0].id)).toBeLessThan(Number(one.events[0].id));
    const all = await manage(['audit', 'list', '--type', 'app.created,api_key.created,price.set']);
    expect(new Set(all.events.map((e: Json) => e.service))).toEqual(new Set(['identity', 'transactions', 'prices']));
    expect(Object.keys(all.next_cursors)).toEqual(['identity', 'transactions', 'prices']);
    const times = all.events.map((e: Json) => e.at as string);
    expect([...times].sort().reverse()).toEqual(times);
    expect(await failure(['audit', 'list', '--cursor', '5'])).toMatch(/--cursor needs --service/);
    expect(await failure(['audit', 'list', '--service', 'billing'])).toMatch(
      /--service must be identity, transactions or prices/,
    );
    expect(await failure(['audit', 'list', '--service', 'prices', '--since', 'last week'])).toMatch(
      /since must be an ISO 8601 date.*\(since\) \[invalid_parameter\]/,
    );
  });

  it('admin tokens: one named token for all three services, named in the audit, revoked everywhere', async () => {
    const created = await manage(['admin-token', 'create', '--name', 'cli-ops']);
    expect(created).toEqual({
      name: 'cli-ops',
      token: expect.stringMatching(/^adm_/),
      services: ['identity', 'transactions', 'prices'],
    });
    const asOps = { ADMIN_TOKEN: created.token as string };
    await manage(['price', 'set', '--token', 'WLD', '--fiat', 'USD', '--amount', '2'], asOps);
    const app = await manage(['app', 'create', '--name', 'By ops', '--redirect-uri', 'https://e.example/cb'], asOps);
    const events = await manage([
      'audit',
      'list',
      '--type',
      'app.created,api_key.created,price.set',
      '--limit',
      '1000',
    ]);
    const byOps = events.events.filter((e: Json) => e.actor.id === 'cli-ops');
    expect(new Set(byOps.map((e: Json) => e.service))).toEqual(new Set(['identity', 'transactions', 'prices']));
    expect(byOps.find((e: Json) => e.type === 'app.created').subject).toBe(app.app_id);
    const list = await manage(['admin-token', 'list']);
    for (const service of ['identity', 'transactions', 'prices'])
      expect(list[service]).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'cli-ops', source: 'stored', created_by: 'admin' })]),
      );
    expect(JSON.stringify(list)).not.toContain(created.token);
    expect(await failure(['admin-token', 'create', '--name', 'cli-ops'])).toMatch(/^identity: .*\[name_taken\]/);
    expect(await manage(['admin-token', 'revoke', 'cli-ops'])).toEqual({
      name: 'cli-ops',
      revoked: ['identity', 'transactions', 'prices'],
      not_found: [],
    });
    expect(await failure(['app', 'list'], asOps)).toMatch(/Invalid admin token\. \[unauthenticated\]/);
    expect(await failure(['admin-token', 'revoke', 'cli-ops'])).toMatch(/No stored admin token named cli-ops/);
  });
});

/** The process contract: help on stdout with exit 0; a problem on stderr with exit 1. */
describe('pnpm manage as a process', () => {
  it('prints help as text and exits 0; prints an error and exits 1', async () => {
    const help = await manageProcess(['user', '--help'], { PATH: process.env.PATH });
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('pnpm manage user delete USER_ID');
    const bad = await manageProcess(['user', 'delete'], { PATH: process.env.PATH });
    expect(bad).toMatchObject({ code: 1, stdout: '' });
    expect(bad.stderr).toMatch(/^error: Expected USER_ID/);
  });
});
