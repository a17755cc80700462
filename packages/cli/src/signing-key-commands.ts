import type { Command } from './command';

export const signingKeyCommands: Record<string, Command> = {
  'signing-key list': {
    summary:
      'list the published signing keys, every algorithm’s (kid, alg, use, status: active, next (published ahead), retired)',
    options: {},
    run: (client) => client.call('identity', 'GET', '/keys'),
  },
  'signing-key rotate': {
    summary:
      'sign now with the next key (when published) or a new one, for every algorithm; the old one stays published until its tokens expire',
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
