import { path, str, type Command } from './command';

/** Initial access tokens for POST /register under CLIENT_REGISTRATION=token (identity, issue 41). */
export const registrationTokenCommands: Record<string, Command> = {
  'registration-token create': {
    summary: 'create an initial access token for Dynamic Client Registration (CLIENT_REGISTRATION=token), printed once',
    options: {
      name: { type: 'string', value: 'NAME', description: 'who or what it is for, e.g. "ci" or "Claude Code team"' },
      'expires-in-days': {
        type: 'string',
        value: 'N',
        description: 'it stops working after N days (1-3650; default: until revoked)',
      },
    },
    required: ['name'],
    run: (client, values) => {
      const days = str(values, 'expires-in-days');
      return client.call('identity', 'POST', '/registration-tokens', {
        name: str(values, 'name'),
        ...(days === undefined ? {} : { expires_in_days: Number(days) }),
      });
    },
  },
  'registration-token list': {
    summary: 'list the initial access tokens (never the tokens): created, expires, revoked, last used',
    options: {},
    run: (client) => client.call('identity', 'GET', '/registration-tokens'),
  },
  'registration-token revoke': {
    summary: 'revoke an initial access token: registrations with it are refused from now on',
    options: {},
    positionals: ['TOKEN_ID'],
    run: (client, _v, [id]) => client.call('identity', 'POST', `/registration-tokens/${path(id)}/revoke`),
  },
};
