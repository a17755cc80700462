import { CliError, queryString, type AdminClient } from './admin-client';
import { assuranceFields, assuranceOptions, cibaFields, cibaOptions, levelOption, logoutOptions } from './app-options';
import { nullable, pageOptions, path, str, type Command } from './command';

const appId = ['APP_ID'];

interface AppCreated {
  app_id: string;
  client_secret?: string;
  redirect_uris: string[];
  token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
  web_origins: string[];
  min_verification_level: 'orb' | 'device' | null;
  device_authorization_grant: boolean;
  profile: 'none' | 'fapi2';
  may_act_for_users: boolean;
}

const DEVICE_FLOW =
  'the device flow (RFC 8628, device_authorization_grant): /device_authorization, then the person types a code at ' +
  '/device; for a CLI or a device without a browser (public or confidential)';

/**
 * Disables or enables an app in both services that know it: identity (its sign-in and tokens), then
 * transactions (its API keys and webhooks). Both calls are idempotent, so a failed second one is retried
 * by running the command again. Answers identity's app.
 */
async function setAppState(client: AdminClient, id: string, action: 'disable' | 'enable'): Promise<unknown> {
  const app = await client.call('identity', 'POST', `/apps/${path(id)}/${action}`, {});
  // a client whose id is its metadata document's URL signs people in only: no API keys, no webhooks
  if (/^https?:\/\//.test(id)) return app;
  try {
    await client.call('transactions', 'POST', `/apps/${path(id)}/${action}`, {});
  } catch (err) {
    const done = action === 'disable' ? 'disabled (no new tokens)' : 'enabled for sign-in';
    throw new CliError(
      `App ${id} was ${done}, but its API keys and webhooks were not ${action}d: ${(err as Error).message}. ` +
        `Run: pnpm manage app ${action} ${id}`,
    );
  }
  return app;
}

export const appCommands: Record<string, Command> = {
  'app create': {
    summary: 'create an app (client id and secret) and its first API key',
    options: {
      name: { type: 'string', value: 'NAME', description: 'the name people see on the sign-in page' },
      'redirect-uri': {
        type: 'string',
        multiple: true,
        value: 'URI',
        description: 'where sign-in returns to (https, or http on localhost); repeat for more',
      },
      public: { type: 'boolean', description: 'a single-page or native app: no secret, code flow with PKCE S256 only' },
      'web-origin': {
        type: 'string',
        multiple: true,
        value: 'ORIGIN',
        description: 'an origin whose pages may call /token (CORS), e.g. https://app.example.com; repeat for more',
      },
      'dpop-required': {
        type: 'boolean',
        description: 'DPoP required (RFC 9449 dpop_bound_access_tokens): /token refuses a request without a DPoP proof',
      },
      'device-flow': { type: 'boolean', description: `allow ${DEVICE_FLOW}` },
      'may-act-for-users': {
        type: 'boolean',
        description:
          "an agent: it may exchange a person's access token another app got for a short-lived token acting for that person (RFC 8693 token exchange; may_act_for_users)",
      },
      ...levelOption,
      ...logoutOptions,
      ...assuranceOptions,
      ...cibaOptions,
    },
    required: ['name', 'redirect-uri'],
    async run(client, values) {
      const app = await client.call<AppCreated>('identity', 'POST', '/apps', {
        name: str(values, 'name'),
        redirect_uris: values['redirect-uri'],
        ...assuranceFields(values),
        ...cibaFields(values),
        ...(values.public ? { token_endpoint_auth_method: 'none' } : {}),
        ...(values['web-origin'] ? { web_origins: values['web-origin'] } : {}),
        post_logout_redirect_uris: values['post-logout-redirect-uri'],
        backchannel_logout_uri: str(values, 'backchannel-logout-uri'),
        ...(values['dpop-required'] ? { dpop_bound_access_tokens: true } : {}),
        ...(values['device-flow'] ? { device_authorization_grant: true } : {}),
        ...(values['may-act-for-users'] ? { may_act_for_users: true } : {}),
        min_verification_level: str(values, 'min-verification-level'),
      });
      let key: { api_key: string };
      try {
        key = await client.call<{ api_key: string }>('transactions', 'POST', `/apps/${app.app_id}/api-keys`, {
          name: 'default',
        });
      } catch (err) {
        const secret = app.client_secret ? ` (client_secret ${app.client_secret})` : '';
        throw new CliError(
          `App ${app.app_id} was created${secret}, but its API key was not: ${(err as Error).message}. ` +
            `Run: pnpm manage api-key create --app-id ${app.app_id}`,
        );
      }
      const { app_id, client_secret, redirect_uris, token_endpoint_auth_method, web_origins } = app;
      const level = {
        ...(app.may_act_for_users ? { may_act_for_users: true } : {}),
        ...(app.min_verification_level ? { min_verification_level: app.min_verification_level } : {}),
        ...(app.profile === 'fapi2' ? { profile: app.profile } : {}),
        ...(app.device_authorization_grant ? { device_authorization_grant: true } : {}),
      };
      return client_secret
        ? {
            app_id,
            client_secret,
            api_key: key.api_key,
            redirect_uris,
            ...(web_origins.length ? { web_origins } : {}),
            ...level,
          }
        : { app_id, token_endpoint_auth_method, api_key: key.api_key, redirect_uris, web_origins, ...level };
    },
  },
  'app list': {
    summary: 'list apps, oldest first, a page at a time',
    options: pageOptions,
    run: (client, values) =>
      client.call(
        'identity',
        'GET',
        `/apps${queryString({ limit: str(values, 'limit'), cursor: str(values, 'cursor') })}`,
      ),
  },
  'app show': {
    summary: 'show one app',
    options: {},
    positionals: appId,
    run: (client, _v, [id]) => client.call('identity', 'GET', `/apps/${path(id)}`),
  },
  'app update': {
    summary:
      'change the name, redirect URIs, web origins, minimum verification level, logout settings, DPoP requirement, device flow, acting for people, high-assurance settings, profile or CIBA settings (a list given replaces the old one)',
    options: {
      name: { type: 'string', value: 'NAME', description: 'the new name' },
      'redirect-uri': {
        type: 'string',
        multiple: true,
        value: 'URI',
        description: 'the new redirect URIs; repeat for more',
      },
      'web-origin': {
        type: 'string',
        multiple: true,
        value: 'ORIGIN',
        description: 'the new web origins (CORS on /token); repeat for more',
      },
      'dpop-required': {
        type: 'boolean',
        description: 'require DPoP proofs at /token: every access token becomes DPoP-bound (dpop_bound_access_tokens)',
      },
      'no-dpop-required': { type: 'boolean', description: 'accept token requests without a DPoP proof again' },
      'device-flow': { type: 'boolean', description: `allow ${DEVICE_FLOW}` },
      'no-device-flow': {
        type: 'boolean',
        description: 'refuse the device flow again (codes not yet redeemed stop working)',
      },
      'may-act-for-users': {
        type: 'boolean',
        description:
          "let the app (an agent) act for people: exchange a person's access token another app got (RFC 8693; may_act_for_users)",
      },
      'no-may-act-for-users': {
        type: 'boolean',
        description: 'stop it: only tokens the person gave the app itself can be exchanged',
      },
      ...levelOption,
      ...logoutOptions,
      ...assuranceOptions,
      ...cibaOptions,
    },
    positionals: appId,
    run: (client, values, [id]) => {
      if (values['dpop-required'] && values['no-dpop-required'])
        throw new CliError('Give --dpop-required or --no-dpop-required, not both.');
      const dpop = values['dpop-required'] ? true : values['no-dpop-required'] ? false : undefined;
      if (values['device-flow'] && values['no-device-flow'])
        throw new CliError('Give --device-flow or --no-device-flow, not both.');
      const deviceFlow = values['device-flow'] ? true : values['no-device-flow'] ? false : undefined;
      if (values['may-act-for-users'] && values['no-may-act-for-users'])
        throw new CliError('Give --may-act-for-users or --no-may-act-for-users, not both.');
      const mayAct = values['may-act-for-users'] ? true : values['no-may-act-for-users'] ? false : undefined;
      const body = {
        name: str(values, 'name'),
        redirect_uris: values['redirect-uri'],
        web_origins: values['web-origin'],
        post_logout_redirect_uris: values['post-logout-redirect-uri'],
        backchannel_logout_uri: nullable(values, 'backchannel-logout-uri'),
        dpop_bound_access_tokens: dpop,
        device_authorization_grant: deviceFlow,
        may_act_for_users: mayAct,
        min_verification_level: str(values, 'min-verification-level'),
        ...assuranceFields(values),
        ...cibaFields(values),
      };
      if (Object.values(body).every((v) => v === undefined))
        throw new CliError(
          'Nothing to change: give --name, --redirect-uri, --web-origin, --min-verification-level, --post-logout-redirect-uri, ' +
            '--backchannel-logout-uri, --dpop-required, --no-dpop-required, --device-flow, --no-device-flow, --may-act-for-users, --no-may-act-for-users, ' +
            '--auth-method, --jwks-file, --jwks-uri, --require-par, --no-require-par, --id-token-alg, --profile, --ciba-mode or --ciba-notification-endpoint.',
        );
      return client.call('identity', 'PATCH', `/apps/${path(id)}`, body);
    },
  },
  'app disable': {
    summary: 'disable an app: it gets no tokens, its tokens stop working, its API keys get 401 and its webhooks stop',
    options: {},
    positionals: appId,
    run: (client, _v, [id]) => setAppState(client, id, 'disable'),
  },
  'app enable': {
    summary: 'enable a disabled app again (its tokens, API keys and webhooks)',
    options: {},
    positionals: appId,
    run: (client, _v, [id]) => setAppState(client, id, 'enable'),
  },
  'app add-member': {
    summary: "make a person a member of an app's team in the developer portal, or change their role",
    options: {
      'app-id': { type: 'string', value: 'APP_ID', description: 'the app' },
      username: { type: 'string', value: 'U', description: 'the person (an existing user)' },
      role: {
        type: 'string',
        value: 'owner|developer|viewer',
        description: 'owner: everything and the team; developer: settings, secret, API keys; viewer: reads only',
      },
    },
    required: ['app-id', 'username', 'role'],
    run: (client, values) =>
      client.call('identity', 'PUT', `/apps/${path(str(values, 'app-id')!)}/members`, {
        username: str(values, 'username'),
        role: str(values, 'role'),
      }),
  },
  'app remove-member': {
    summary: "take a person off an app's team (the last owner stays)",
    options: {
      'app-id': { type: 'string', value: 'APP_ID', description: 'the app' },
      username: { type: 'string', value: 'U', description: 'the member' },
    },
    required: ['app-id', 'username'],
    async run(client, values) {
      const appId = str(values, 'app-id')!;
      const username = str(values, 'username')!;
      const members = await client.call<{ user_id: string; username: string }[]>(
        'identity',
        'GET',
        `/apps/${path(appId)}/members`,
      );
      const member = members.find((m) => m.username === username);
      if (!member) throw new CliError(`${username} is not a member of ${appId}.`);
      await client.call('identity', 'DELETE', `/apps/${path(appId)}/members/${path(member.user_id)}`);
      return { app_id: appId, username, removed: true };
    },
  },
  'app list-members': {
    summary: "an app's team: its members and their roles, owners first",
    options: { 'app-id': { type: 'string', value: 'APP_ID', description: 'the app' } },
    required: ['app-id'],
    run: (client, values) => client.call('identity', 'GET', `/apps/${path(str(values, 'app-id')!)}/members`),
  },
  'app rotate-secret': {
    summary: 'give the app a new client secret (printed once); the old one stops working',
    options: {},
    positionals: appId,
    run: (client, _v, [id]) => client.call('identity', 'POST', `/apps/${path(id)}/rotate-secret`, {}),
  },
};
