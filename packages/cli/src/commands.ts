import type { AdminClient } from './admin-client';
import { CliError } from './admin-client';

export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Command {
  usage: string;
  options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;
  positionals?: string[];
  required?: string[];
  run(client: AdminClient, values: Values, positionals: string[]): Promise<unknown>;
}

const str = (values: Values, key: string) => values[key] as string | undefined;

export const commands: Record<string, Command> = {
  'app create': {
    usage:
      'app create --name NAME --redirect-uri URI [--redirect-uri URI ...] [--post-logout-redirect-uri URI ...] [--backchannel-logout-uri URI]',
    options: {
      name: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      'post-logout-redirect-uri': { type: 'string', multiple: true },
      'backchannel-logout-uri': { type: 'string' },
    },
    required: ['name', 'redirect-uri'],
    async run(client, values) {
      const app = await client.call<{
        app_id: string;
        client_secret: string;
        redirect_uris: string[];
        post_logout_redirect_uris?: string[];
        backchannel_logout_uri?: string | null;
      }>('identity', 'POST', '/apps', {
        name: str(values, 'name'),
        redirect_uris: values['redirect-uri'],
        ...(values['post-logout-redirect-uri'] ? { post_logout_redirect_uris: values['post-logout-redirect-uri'] } : {}),
        ...(values['backchannel-logout-uri'] ? { backchannel_logout_uri: str(values, 'backchannel-logout-uri') } : {}),
      });
      let key: { api_key: string };
      try {
        key = await client.call<{ api_key: string }>('transactions', 'POST', `/apps/${app.app_id}/api-keys`, { name: 'default' });
      } catch (err) {
        throw new CliError(
          `App ${app.app_id} was created (client_secret ${app.client_secret}), but its API key was not: ${(err as Error).message}. ` +
            `Run: pnpm manage api-key create --app-id ${app.app_id}`,
        );
      }
      return {
        app_id: app.app_id,
        client_secret: app.client_secret,
        api_key: key.api_key,
        redirect_uris: app.redirect_uris,
        ...(app.post_logout_redirect_uris?.length ? { post_logout_redirect_uris: app.post_logout_redirect_uris } : {}),
        ...(app.backchannel_logout_uri ? { backchannel_logout_uri: app.backchannel_logout_uri } : {}),
      };
    },
  },
  'app rotate-secret': {
    usage: 'app rotate-secret APP_ID',
    options: {},
    positionals: ['APP_ID'],
    run: (client, _v, [appId]) => client.call('identity', 'POST', `/apps/${encodeURIComponent(appId)}/rotate-secret`, {}),
  },
  'app list': {
    usage: 'app list',
    options: {},
    run: (client) => client.call('identity', 'GET', '/apps'),
  },
  'api-key create': {
    usage: 'api-key create --app-id APP_ID [--name NAME]',
    options: { 'app-id': { type: 'string' }, name: { type: 'string' } },
    required: ['app-id'],
    run: (client, values) =>
      client.call('transactions', 'POST', `/apps/${encodeURIComponent(str(values, 'app-id')!)}/api-keys`, { name: str(values, 'name') }),
  },
  'api-key list': {
    usage: 'api-key list --app-id APP_ID',
    options: { 'app-id': { type: 'string' } },
    required: ['app-id'],
    run: (client, values) => client.call('transactions', 'GET', `/apps/${encodeURIComponent(str(values, 'app-id')!)}/api-keys`),
  },
  'api-key revoke': {
    usage: 'api-key revoke KEY_ID',
    options: {},
    positionals: ['KEY_ID'],
    run: (client, _v, [keyId]) => client.call('transactions', 'POST', `/api-keys/${encodeURIComponent(keyId)}/revoke`, {}),
  },
  'user create': {
    usage: 'user create --username U --password P --verification-level orb|device [--name N] [--given-name G] [--family-name F]',
    options: {
      username: { type: 'string' },
      password: { type: 'string' },
      'verification-level': { type: 'string' },
      name: { type: 'string' },
      'given-name': { type: 'string' },
      'family-name': { type: 'string' },
    },
    required: ['username', 'password', 'verification-level'],
    run: (client, values) =>
      client.call('identity', 'POST', '/users', {
        username: str(values, 'username'),
        password: str(values, 'password'),
        verification_level: str(values, 'verification-level'),
        name: str(values, 'name'),
        given_name: str(values, 'given-name'),
        family_name: str(values, 'family-name'),
      }),
  },
  'transaction record': {
    usage:
      'transaction record --app-id ID --type pay|sendTransaction --reference R --from ADDR --to ADDR --chain NAME --token CODE --token-amount INTEGER [--transaction-hash 0x…] [--status pending|mined|failed]',
    options: Object.fromEntries(
      ['app-id', 'type', 'reference', 'from', 'to', 'chain', 'token', 'token-amount', 'transaction-hash', 'status'].map((k) => [k, { type: 'string' as const }]),
    ),
    required: ['app-id', 'type', 'reference', 'from', 'to', 'chain', 'token', 'token-amount'],
    run: (client, values) =>
      client.call('transactions', 'POST', '/transactions', {
        app_id: str(values, 'app-id'),
        type: str(values, 'type'),
        reference: str(values, 'reference'),
        from: str(values, 'from'),
        to: str(values, 'to'),
        chain: str(values, 'chain'),
        token: str(values, 'token'),
        token_amount: str(values, 'token-amount'),
        transaction_hash: str(values, 'transaction-hash'),
        status: str(values, 'status'),
      }),
  },
  'transaction set-status': {
    usage: 'transaction set-status TRANSACTION_ID mined|failed',
    options: {},
    positionals: ['TRANSACTION_ID', 'STATUS'],
    run: (client, _v, [id, status]) =>
      client.call('transactions', 'POST', `/transactions/${encodeURIComponent(id)}/status`, { status }),
  },
  'price set': {
    usage: 'price set --token CODE --fiat CODE --amount DECIMAL',
    options: { token: { type: 'string' }, fiat: { type: 'string' }, amount: { type: 'string' } },
    required: ['token', 'fiat', 'amount'],
    run: (client, values) =>
      client.call('prices', 'POST', '/prices', { token: str(values, 'token'), fiat: str(values, 'fiat'), amount: str(values, 'amount') }),
  },
};
