import { path, str, type Command, type Values } from './command';

const scope = {
  type: 'string',
  multiple: true,
  value: 'S',
  description: 'a scope the resource offers (not openid, profile, email or offline_access); repeat for more',
} as const;
const level = {
  type: 'string',
  value: 'orb|device|none',
  description:
    'a token for it needs a person at this level or above (unmet_authentication_requirements); none: no minimum',
} as const;
const name = { type: 'string', value: 'NAME', description: 'what the consent page calls it' } as const;
const machineClient = {
  type: 'string',
  multiple: true,
  value: 'APP_ID',
  description:
    'an app that may get a token for it as itself (grant_type=client_credentials); repeat for more; no other app may',
} as const;

const accessTokenAlg = {
  type: 'string',
  value: 'RS256|PS256|ES256',
  description:
    "what its access tokens are signed with (RFC 9068); RS256, the default, keeps the app's own (a FAPI 2 app's PS256 or ES256)",
} as const;

/** The fields given (absent ones stay out, so an update changes only those). */
const fieldsOf = (values: Values) =>
  Object.fromEntries(
    Object.entries({
      name: str(values, 'name'),
      scopes: values['no-scopes'] ? [] : (values.scope as string[] | undefined),
      min_verification_level: str(values, 'min-verification-level'),
      machine_clients: values['no-machine-clients'] ? [] : (values['machine-client'] as string[] | undefined),
      access_token_alg: str(values, 'access-token-alg'),
    }).filter(([, v]) => v !== undefined),
  );

/** Resources (identity, issue 41): APIs that accept Attest's tokens bound to them (RFC 8707). */
export const resourceCommands: Record<string, Command> = {
  'resource create': {
    summary:
      'register a resource (an API, e.g. an MCP server) clients get tokens for; prints its introspection secret once',
    options: {
      uri: {
        type: 'string',
        value: 'URI',
        description:
          'its identifier: the `resource` clients send and the `aud` of its tokens (https, or http on localhost)',
      },
      name,
      scope,
      'min-verification-level': level,
      'machine-client': machineClient,
      'access-token-alg': accessTokenAlg,
    },
    required: ['uri', 'name'],
    run: (client, values) =>
      client.call('identity', 'POST', '/resources', { uri: str(values, 'uri'), scopes: [], ...fieldsOf(values) }),
  },
  'resource list': {
    summary: 'list the registered resources (never their secrets)',
    options: {},
    run: (client) => client.call('identity', 'GET', '/resources'),
  },
  'resource show': {
    summary: 'show one resource',
    options: {},
    positionals: ['RESOURCE_ID'],
    run: (client, _v, [id]) => client.call('identity', 'GET', `/resources/${path(id)}`),
  },
  'resource update': {
    summary:
      "change a resource's name, scopes (--scope replaces the list), minimum level, machine clients (--machine-client replaces the list) or access tokens' algorithm; its uri stays",
    options: {
      name,
      scope,
      'no-scopes': { type: 'boolean', description: 'the resource offers no scopes any more' },
      'min-verification-level': level,
      'machine-client': machineClient,
      'no-machine-clients': { type: 'boolean', description: 'no app may get a token for it as itself any more' },
      'access-token-alg': accessTokenAlg,
    },
    positionals: ['RESOURCE_ID'],
    run: (client, values, [id]) => client.call('identity', 'PATCH', `/resources/${path(id)}`, fieldsOf(values)),
  },
  'resource rotate-secret': {
    summary: "a new introspection secret for the resource's server (printed once; the old one stops at once)",
    options: {},
    positionals: ['RESOURCE_ID'],
    run: (client, _v, [id]) => client.call('identity', 'POST', `/resources/${path(id)}/rotate-secret`, {}),
  },
  'resource delete': {
    summary: 'delete a resource: no new tokens for it, its server can no longer introspect',
    options: {},
    positionals: ['RESOURCE_ID'],
    run: (client, _v, [id]) => client.call('identity', 'DELETE', `/resources/${path(id)}`),
  },
};
