import { randomBytes } from 'node:crypto';
import { CliError, queryString, type AdminClient, type ServiceName } from './admin-client';
import { path, str, type Command, type Values } from './command';

const SERVICES: ServiceName[] = ['identity', 'transactions', 'prices'];
const serviceOption = {
  type: 'string',
  value: 'identity|transactions|prices',
  description: 'one service (default: all three)',
} as const;

function servicesOf(values: Values): ServiceName[] {
  const one = str(values, 'service');
  if (one === undefined) return SERVICES;
  if (!SERVICES.includes(one as ServiceName))
    throw new CliError(`--service must be identity, transactions or prices (got ${one}).`);
  return [one as ServiceName];
}

interface AuditPage {
  events: { at: string }[];
  next_cursor: string | null;
}

/** Each service's page, merged newest first; with one service, its page as it is (and its cursor). */
async function auditList(client: AdminClient, values: Values) {
  const services = servicesOf(values);
  if (str(values, 'cursor') !== undefined && services.length > 1)
    throw new CliError('--cursor needs --service: each service pages its own trail.');
  const query = queryString({
    since: str(values, 'since'),
    type: str(values, 'type'),
    limit: str(values, 'limit'),
    cursor: str(values, 'cursor'),
  });
  const pages = await Promise.all(services.map((s) => client.call<AuditPage>(s, 'GET', `/audit${query}`)));
  const events = pages
    .flatMap((p, i) => p.events.map((e) => ({ service: services[i], ...e })))
    .sort((a, b) => b.at.localeCompare(a.at));
  if (services.length === 1) return { events, next_cursor: pages[0].next_cursor };
  const limit = Number(str(values, 'limit') ?? 100);
  return {
    events: events.slice(0, limit),
    next_cursors: Object.fromEntries(services.map((s, i) => [s, pages[i].next_cursor])),
  };
}

export const auditCommands: Record<string, Command> = {
  'audit list': {
    summary: 'list audit events, newest first (who, what, when, request id)',
    options: {
      service: serviceOption,
      since: {
        type: 'string',
        value: 'TIME',
        description: 'only events at or after this ISO 8601 time, e.g. 2025-01-31T12:00:00Z',
      },
      type: {
        type: 'string',
        value: 'TYPE[,TYPE]',
        description: 'only these event types, e.g. user.disabled,app.disabled',
      },
      limit: { type: 'string', value: 'N', description: 'how many per service (1-1000, default 100)' },
      cursor: { type: 'string', value: 'CURSOR', description: 'the next_cursor of the previous page (with --service)' },
    },
    run: auditList,
  },
};

export const adminTokenCommands: Record<string, Command> = {
  'admin-token create': {
    summary: 'create a named admin token (printed once) on every service; the audit names its holder',
    options: {
      name: {
        type: 'string',
        value: 'N',
        description: 'the operator name, e.g. alice (lowercase letters, digits, . _ -)',
      },
      service: serviceOption,
    },
    required: ['name'],
    async run(client, values) {
      const token = `adm_${randomBytes(32).toString('base64url')}`;
      const done: ServiceName[] = [];
      for (const service of servicesOf(values)) {
        try {
          await client.call(service, 'POST', '/admin-tokens', { name: str(values, 'name'), token });
        } catch (err) {
          const hint = done.length
            ? ` It was created on ${done.join(', ')}: revoke it there (pnpm manage admin-token revoke ${str(values, 'name')} --service …) or retry the others with --service.`
            : '';
          throw new CliError(`${service}: ${(err as Error).message}.${hint}`);
        }
        done.push(service);
      }
      return { name: str(values, 'name'), token, services: done };
    },
  },
  'admin-token list': {
    summary: 'list the admin token names of each service (never the tokens)',
    options: { service: serviceOption },
    async run(client, values) {
      const services = servicesOf(values);
      const lists = await Promise.all(
        services.map((s) => client.call<{ tokens: unknown[] }>(s, 'GET', '/admin-tokens')),
      );
      return Object.fromEntries(services.map((s, i) => [s, lists[i].tokens]));
    },
  },
  'admin-token revoke': {
    summary: 'revoke a stored admin token on every service; it stops working at once',
    options: { service: serviceOption },
    positionals: ['NAME'],
    async run(client, values, [name]) {
      const revoked: ServiceName[] = [];
      const missing: ServiceName[] = [];
      for (const service of servicesOf(values)) {
        try {
          await client.call(service, 'DELETE', `/admin-tokens/${path(name)}`);
          revoked.push(service);
        } catch (err) {
          if (!/\[not_found\]$/.test((err as Error).message)) throw err;
          missing.push(service);
        }
      }
      if (revoked.length === 0) throw new CliError(`No stored admin token named ${name}.`);
      return { name, revoked: revoked, not_found: missing };
    },
  },
};
