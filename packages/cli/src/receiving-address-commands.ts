import { path, str, type Command } from './command';

const appId = { type: 'string', value: 'APP_ID', description: 'the app' } as const;
const chain = {
  type: 'string',
  value: 'CHAIN',
  description: 'a chain the transactions service is configured for (CHAIN_TOKENS), e.g. worldchain',
} as const;
const address = { type: 'string', value: 'ADDRESS', description: '0x… address (lower case or EIP-55)' } as const;

/**
 * The addresses an app receives payments at (transactions service): an app records payments and creates
 * payment requests only to its own; one app per (chain, address).
 */
export const receivingAddressCommands: Record<string, Command> = {
  'receiving-address add': {
    summary:
      'add an address an app receives payments at, on the operator’s word (no signature asked); refused when another app holds it',
    options: { 'app-id': appId, chain, address },
    required: ['app-id', 'chain', 'address'],
    run: (client, values) =>
      client.call('transactions', 'POST', `/apps/${path(str(values, 'app-id')!)}/receiving-addresses`, {
        chain: str(values, 'chain'),
        address: str(values, 'address'),
      }),
  },
  'receiving-address list': {
    summary: "list an app's receiving addresses, with how each was added (operator, eip191, eip1271)",
    options: { 'app-id': appId, chain: { ...chain, description: 'only this chain’s' } },
    required: ['app-id'],
    run: (client, values) => {
      const only = str(values, 'chain');
      return client.call(
        'transactions',
        'GET',
        `/apps/${path(str(values, 'app-id')!)}/receiving-addresses${only ? `?chain=${encodeURIComponent(only)}` : ''}`,
      );
    },
  },
  'receiving-address remove': {
    summary: 'remove an address from an app: it records and asks for no payment there from now on',
    options: { 'app-id': appId, chain, address },
    required: ['app-id', 'chain', 'address'],
    run: (client, values) =>
      client.call(
        'transactions',
        'DELETE',
        `/apps/${path(str(values, 'app-id')!, 'receiving-addresses', str(values, 'chain')!, str(values, 'address')!)}`,
      ),
  },
};
