import { CliError, queryString } from './admin-client';
import { nullable, pageOptions, path, str, type Command } from './command';

const userId = ['USER_ID'];

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
