import type { Command } from './command';
import { appCommands } from './app-commands';
import { adminTokenCommands, auditCommands } from './operator-commands';
import { receivingAddressCommands } from './receiving-address-commands';
import { apiKeyCommands, priceCommands, transactionCommands, x402Commands } from './service-commands';
import { registrationTokenCommands } from './registration-commands';
import { resourceCommands } from './resource-commands';
import { signingKeyCommands } from './signing-key-commands';
import { userCommands } from './user-commands';
import { webhookCommands } from './webhook-commands';

export type { Command, Values } from './command';

/** Every command, by `noun verb`; the nouns in the order `--help` lists them. */
export const commands: Record<string, Command> = {
  ...appCommands,
  ...resourceCommands,
  ...apiKeyCommands,
  ...userCommands,
  ...signingKeyCommands,
  ...registrationTokenCommands,
  ...transactionCommands,
  ...receivingAddressCommands,
  ...webhookCommands,
  ...x402Commands,
  ...priceCommands,
  ...auditCommands,
  ...adminTokenCommands,
};

export const NOUN_SUMMARIES: Record<string, string> = {
  app: 'apps that sign people in (identity)',
  resource: 'APIs that accept tokens bound to them, e.g. MCP servers (identity)',
  'api-key': "API keys of apps' backends (transactions)",
  user: 'people who sign in (identity)',
  'signing-key': 'the keys that sign tokens (identity)',
  'registration-token': 'initial access tokens of Dynamic Client Registration (identity)',
  transaction: 'payments and transactions (transactions)',
  'receiving-address': 'the addresses an app receives payments at (transactions)',
  webhook: "signed webhooks to apps' backends (transactions)",
  x402: 'the x402 facilitator’s relayer (transactions)',
  price: 'prices and their feeds (prices)',
  audit: 'the audit trail of each service',
  'admin-token': 'named operator tokens for the admin APIs',
};
