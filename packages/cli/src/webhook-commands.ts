import { nullable, path, str, type Command, type Values } from './command';

const appId = { type: 'string', value: 'APP_ID', description: 'the app' } as const;
const event = {
  type: 'string',
  multiple: true,
  value: 'TYPE',
  description: 'send only this event type (transaction.mined) or family (transaction.*); none: every type',
} as const;
const description = { type: 'string', value: 'TEXT', description: 'a label for the endpoint ("" clears it)' } as const;

/** --event (repeatable) as the filter; --all-events: every type again. */
const filterOf = (values: Values) => {
  if (values['all-events']) return { enabled_events: [] };
  const events = values.event as string[] | undefined;
  return events?.length ? { enabled_events: events } : {};
};

/** Webhook endpoints of an app and their deliveries (transactions service). */
export const webhookCommands: Record<string, Command> = {
  'webhook add': {
    summary: 'add a webhook endpoint for an app; prints its signing secret (whsec_…) once',
    options: {
      'app-id': appId,
      url: { type: 'string', value: 'URL', description: 'https URL (or http on loopback) that receives the events' },
      event,
      description,
    },
    required: ['app-id', 'url'],
    run: (client, values) =>
      client.call('transactions', 'POST', `/apps/${path(str(values, 'app-id')!)}/webhooks`, {
        url: str(values, 'url'),
        ...(values.description !== undefined ? { description: nullable(values, 'description') } : {}),
        ...filterOf(values),
      }),
  },
  'webhook update': {
    summary: 'change an endpoint: its url, description or event-type filter',
    options: {
      url: { type: 'string', value: 'URL', description: 'the new URL' },
      event,
      'all-events': { type: 'boolean', description: 'remove the filter: send every event type' },
      description,
    },
    positionals: ['WEBHOOK_ID'],
    run: (client, values, [id]) =>
      client.call('transactions', 'PATCH', `/webhooks/${path(id)}`, {
        ...(values.url !== undefined ? { url: str(values, 'url') } : {}),
        ...(values.description !== undefined ? { description: nullable(values, 'description') } : {}),
        ...filterOf(values),
      }),
  },
  'webhook disable': {
    summary: 'disable an endpoint: no new deliveries; waiting ones wait until it is enabled',
    options: {},
    positionals: ['WEBHOOK_ID'],
    run: (client, _v, [id]) => client.call('transactions', 'POST', `/webhooks/${path(id)}/disable`, {}),
  },
  'webhook enable': {
    summary: 'enable an endpoint again, with the same secret and its delivery log',
    options: {},
    positionals: ['WEBHOOK_ID'],
    run: (client, _v, [id]) => client.call('transactions', 'POST', `/webhooks/${path(id)}/enable`, {}),
  },
  'webhook list': {
    summary:
      "list an app's webhook endpoints (never their secrets), each with its status: enabled, failing (since, failures in a row) or disabled (why)",
    options: { 'app-id': appId },
    required: ['app-id'],
    run: (client, values) => client.call('transactions', 'GET', `/apps/${path(str(values, 'app-id')!)}/webhooks`),
  },
  'webhook remove': {
    summary: 'remove a webhook endpoint; pending deliveries to it stop',
    options: {},
    positionals: ['WEBHOOK_ID'],
    run: (client, _v, [id]) => client.call('transactions', 'DELETE', `/webhooks/${path(id)}`),
  },
  'webhook rotate-secret': {
    summary: 'new signing secret (printed once); the old one keeps signing too for 24 h',
    options: {},
    positionals: ['WEBHOOK_ID'],
    run: (client, _v, [id]) => client.call('transactions', 'POST', `/webhooks/${path(id)}/rotate-secret`, {}),
  },
  'webhook deliveries': {
    summary: "an endpoint's delivery log: events, attempts, statuses, latency",
    options: { limit: { type: 'string', value: 'N', description: 'how many deliveries, newest first' } },
    positionals: ['WEBHOOK_ID'],
    run: (client, values, [id]) => {
      const limit = str(values, 'limit');
      return client.call(
        'transactions',
        'GET',
        `/webhooks/${path(id)}/deliveries${limit ? `?limit=${encodeURIComponent(limit)}` : ''}`,
      );
    },
  },
  'webhook redeliver': {
    summary: 'send a delivery again (same webhook-id)',
    options: {},
    positionals: ['DELIVERY_ID'],
    run: (client, _v, [id]) => client.call('transactions', 'POST', `/webhook-deliveries/${path(id)}/redeliver`, {}),
  },
  'webhook replay': {
    summary: 'send again every event of an app since a time, to each of its endpoints',
    options: {
      'app-id': appId,
      since: { type: 'string', value: 'TIME', description: 'ISO 8601, e.g. 2026-01-31T12:00:00Z' },
    },
    required: ['app-id', 'since'],
    run: (client, values) =>
      client.call('transactions', 'POST', `/apps/${path(str(values, 'app-id')!)}/webhooks/replay`, {
        since: str(values, 'since'),
      }),
  },
};
