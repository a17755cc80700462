import { readFileSync } from 'node:fs';
import { CliError, queryString, type AdminClient } from './admin-client';
import { nullable, pageOptions, path, str, type Command, type Values } from './command';

const appId = ['APP_ID'];

interface AppCreated {
  app_id: string;
  client_secret?: string;
  redirect_uris: string[];
  token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
  web_origins: string[];
  min_verification_level: 'orb' | 'device' | null;
  profile: 'none' | 'fapi2';
}
const userId = ['USER_ID'];

/** RP-Initiated and Back-Channel Logout registration. */
const logoutOptions = {
  'post-logout-redirect-uri': {
    type: 'string',
    multiple: true,
    value: 'URI',
    description: 'where sign-out may return to (exact match); repeat for more',
  },
  'backchannel-logout-uri': {
    type: 'string',
    value: 'URI',
    description: "where a logout_token is POSTed when a user's session ends ('' clears it on update)",
  },
} as const;

/** High-assurance settings (issue 24): key-based authentication, pushed requests, the id_token algorithm. */
const assuranceOptions = {
  'auth-method': {
    type: 'string',
    value: 'METHOD',
    description:
      'how the app authenticates: client_secret_basic (default), client_secret_post or private_key_jwt (needs --jwks-file or --jwks-uri)',
  },
  'jwks-file': {
    type: 'string',
    value: 'FILE',
    description:
      "a JSON file with the app's public keys (a JWK Set) for private_key_jwt and signed requests ('' clears on update)",
  },
  'jwks-uri': {
    type: 'string',
    value: 'URI',
    description: "where the app publishes its public keys, https ('' clears on update)",
  },
  'require-par': { type: 'boolean', description: 'every sign-in of the app must be pushed to /par first (RFC 9126)' },
  'no-require-par': { type: 'boolean', description: 'sign-ins need not be pushed (update)' },
  'id-token-alg': {
    type: 'string',
    value: 'ALG',
    description: "the id_token's signing algorithm: RS256 (default), PS256 or ES256",
  },
  profile: {
    type: 'string',
    value: 'fapi2|none',
    description:
      'fapi2: the FAPI 2.0 profile (PAR, PKCE S256, code flow only, DPoP, private_key_jwt with --jwks-file or ' +
      '--jwks-uri, codes living 60 s at most, https redirect URIs or http on 127.0.0.1/[::1], PS256 or ES256 ' +
      'id_tokens); none (the default) lifts it, each setting staying as it is',
  },
} as const;

function jwksOf(values: Values): unknown {
  const file = values['jwks-file'];
  if (file === undefined) return undefined;
  if (file === '') return null;
  try {
    return JSON.parse(readFileSync(file as string, 'utf8')) as unknown;
  } catch (err) {
    throw new CliError(`--jwks-file ${String(file)}: ${(err as Error).message}`);
  }
}

/** The admin API fields of the high-assurance options given (absent ones stay out). */
function assuranceFields(values: Values): Record<string, unknown> {
  if (values['require-par'] && values['no-require-par'])
    throw new CliError('Give --require-par or --no-require-par, not both.');
  const fields: Record<string, unknown> = {
    token_endpoint_auth_method: str(values, 'auth-method'),
    jwks: jwksOf(values),
    jwks_uri: nullable(values, 'jwks-uri'),
    require_pushed_authorization_requests: values['require-par'] ? true : values['no-require-par'] ? false : undefined,
    id_token_signed_response_alg: str(values, 'id-token-alg'),
    profile: str(values, 'profile'),
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

const levelOption = {
  'min-verification-level': {
    type: 'string',
    value: 'orb|device|none',
    description: 'sign-in refuses people below this level (unmet_authentication_requirements); none: no minimum',
  },
} as const;

/**
 * Disables or enables an app in both services that know it: identity (its sign-in and tokens), then
 * transactions (its API keys and webhooks). Both calls are idempotent, so a failed second one is retried
 * by running the command again. Answers identity's app.
 */
async function setAppState(client: AdminClient, id: string, action: 'disable' | 'enable'): Promise<unknown> {
  const app = await client.call('identity', 'POST', `/apps/${path(id)}/${action}`, {});
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
      ...levelOption,
      ...logoutOptions,
      ...assuranceOptions,
    },
    required: ['name', 'redirect-uri'],
    async run(client, values) {
      const app = await client.call<AppCreated>('identity', 'POST', '/apps', {
        name: str(values, 'name'),
        redirect_uris: values['redirect-uri'],
        ...assuranceFields(values),
        ...(values.public ? { token_endpoint_auth_method: 'none' } : {}),
        ...(values['web-origin'] ? { web_origins: values['web-origin'] } : {}),
        post_logout_redirect_uris: values['post-logout-redirect-uri'],
        backchannel_logout_uri: str(values, 'backchannel-logout-uri'),
        ...(values['dpop-required'] ? { dpop_bound_access_tokens: true } : {}),
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
        ...(app.min_verification_level ? { min_verification_level: app.min_verification_level } : {}),
        ...(app.profile === 'fapi2' ? { profile: app.profile } : {}),
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
      'change the name, redirect URIs, web origins, minimum verification level, logout settings, DPoP requirement, high-assurance settings or profile (a list given replaces the old one)',
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
      ...levelOption,
      ...logoutOptions,
      ...assuranceOptions,
    },
    positionals: appId,
    run: (client, values, [id]) => {
      if (values['dpop-required'] && values['no-dpop-required'])
        throw new CliError('Give --dpop-required or --no-dpop-required, not both.');
      const dpop = values['dpop-required'] ? true : values['no-dpop-required'] ? false : undefined;
      const body = {
        name: str(values, 'name'),
        redirect_uris: values['redirect-uri'],
        web_origins: values['web-origin'],
        post_logout_redirect_uris: values['post-logout-redirect-uri'],
        backchannel_logout_uri: nullable(values, 'backchannel-logout-uri'),
        dpop_bound_access_tokens: dpop,
        min_verification_level: str(values, 'min-verification-level'),
        ...assuranceFields(values),
      };
      if (Object.values(body).every((v) => v === undefined))
        throw new CliError(
          'Nothing to change: give --name, --redirect-uri, --web-origin, --min-verification-level, --post-logout-redirect-uri, ' +
            '--backchannel-logout-uri, --dpop-required, --no-dpop-required, --auth-method, --jwks-file, --jwks-uri, ' +
            '--require-par, --no-require-par, --id-token-alg or --profile.',
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

const nameOptions = {
  name: { type: 'string', value: 'N', description: 'full name ("" clears it)' },
  'given-name': { type: 'string', value: 'G', description: 'given name ("" clears it)' },
  'family-name': { type: 'string', value: 'F', description: 'family name ("" clears it)' },
} as const;

export const userCommands: Record<string, Command> = {
  'user create': {
    summary: 'create a user who can sign in',
    options: {
      username: { type: 'string', value: 'U', description: 'the sign-in name' },
      password: { type: 'string', value: 'P', description: 'at least 8 characters' },
      'verification-level': { type: 'string', value: 'orb|device', description: 'how the person was verified' },
      ...nameOptions,
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
  'user list': {
    summary: 'list users by username, a page at a time',
    options: {
      username: { type: 'string', value: 'PREFIX', description: 'only usernames that start with this' },
      ...pageOptions,
    },
    run: (client, values) =>
      client.call(
        'identity',
        'GET',
        `/users${queryString({ username: str(values, 'username'), limit: str(values, 'limit'), cursor: str(values, 'cursor') })}`,
      ),
  },
  'user show': {
    summary: 'show one user and the apps they consented to',
    options: {},
    positionals: userId,
    run: (client, _v, [id]) => client.call('identity', 'GET', `/users/${path(id)}`),
  },
  'user update': {
    summary: 'change names or the verification level',
    options: {
      ...nameOptions,
      'verification-level': { type: 'string', value: 'orb|device', description: 'how the person was verified' },
    },
    positionals: userId,
    run: (client, values, [id]) => {
      const body = Object.fromEntries(
        Object.entries({
          name: nullable(values, 'name'),
          given_name: nullable(values, 'given-name'),
          family_name: nullable(values, 'family-name'),
          verification_level: str(values, 'verification-level'),
        }).filter(([, v]) => v !== undefined),
      );
      if (Object.keys(body).length === 0)
        throw new CliError('Nothing to change: give --name, --given-name, --family-name or --verification-level.');
      return client.call('identity', 'PATCH', `/users/${path(id)}`, body);
    },
  },
  'user disable': {
    summary: 'disable a user: they cannot sign in, and their tokens stop working',
    options: {},
    positionals: userId,
    run: (client, _v, [id]) => client.call('identity', 'POST', `/users/${path(id)}/disable`, {}),
  },
  'user enable': {
    summary: 'enable a disabled user again',
    options: {},
    positionals: userId,
    run: (client, _v, [id]) => client.call('identity', 'POST', `/users/${path(id)}/enable`, {}),
  },
  'user delete': {
    summary: 'delete a user with their subjects and consents; their sessions and tokens stop working',
    options: {},
    positionals: userId,
    async run(client, _v, [id]) {
      await client.call('identity', 'DELETE', `/users/${path(id)}`);
      return { user_id: id, deleted: true };
    },
  },
  'user reset-password': {
    summary: 'set a new password, or have one generated (printed once)',
    options: {
      password: {
        type: 'string',
        value: 'P',
        description: 'the new password (at least 8 characters); left out, one is generated',
      },
    },
    positionals: userId,
    run: (client, values, [id]) =>
      client.call('identity', 'POST', `/users/${path(id)}/reset-password`, { password: str(values, 'password') }),
  },
  'user withdraw-consent': {
    summary: "withdraw a user's consent to an app; its tokens for them stop working",
    options: {},
    positionals: ['USER_ID', 'APP_ID'],
    async run(client, _v, [id, app]) {
      await client.call('identity', 'DELETE', `/users/${path(id)}/consents/${path(app)}`);
      return { user_id: id, app_id: app, withdrawn: true };
    },
  },
  'user sessions': {
    summary: "a user's browser sessions: device, when signed in, last seen, the apps signed in to",
    options: {},
    positionals: userId,
    run: (client, _v, [id]) => client.call('identity', 'GET', `/users/${path(id)}/sessions`),
  },
  'user end-session': {
    summary: "end one of a user's sessions (apps with a back-channel logout URI are told)",
    options: {},
    positionals: ['USER_ID', 'SESSION_ID'],
    async run(client, _v, [id, session]) {
      await client.call('identity', 'DELETE', `/users/${path(id)}/sessions/${path(session)}`);
      return { user_id: id, session_id: session, ended: true };
    },
  },
  'user end-sessions': {
    summary: 'end every session of a user: they must sign in again everywhere',
    options: {},
    positionals: userId,
    run: (client, _v, [id]) => client.call('identity', 'DELETE', `/users/${path(id)}/sessions`),
  },
};

export const signingKeyCommands: Record<string, Command> = {
  'signing-key list': {
    summary: 'list the published signing keys (the active one and retired ones still published)',
    options: {},
    run: (client) => client.call('identity', 'GET', '/keys'),
  },
  'signing-key rotate': {
    summary: 'sign with a new key now; the old one stays published until its tokens expire',
    options: {
      'revoke-previous': {
        type: 'boolean',
        description:
          'emergency (a key may be compromised): unpublish every earlier key at once; the tokens they signed stop working everywhere',
      },
    },
    run: (client, values) =>
      client.call('identity', 'POST', '/keys/rotate', values['revoke-previous'] ? { revoke_previous: true } : {}),
  },
};
