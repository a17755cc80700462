import fs from 'node:fs';
import path from 'node:path';

export type ServiceName = 'identity' | 'transactions' | 'prices';

const DEFAULT_ADMIN_PORTS: Record<ServiceName, [string, number]> = {
  identity: ['IDENTITY_ADMIN_PORT', 4100],
  transactions: ['TRANSACTIONS_ADMIN_PORT', 4101],
  prices: ['PRICES_ADMIN_PORT', 4102],
};

export class CliError extends Error {}

/** `<SERVICE>_ADMIN_URL`, else loopback on `<SERVICE>_ADMIN_PORT` (the services' defaults). */
export function adminUrl(service: ServiceName, env: NodeJS.ProcessEnv): string {
  const explicit = env[`${service.toUpperCase()}_ADMIN_URL`];
  if (explicit) return explicit.replace(/\/+$/, '');
  const [portVar, fallback] = DEFAULT_ADMIN_PORTS[service];
  return `http://127.0.0.1:${env[portVar] || fallback}`;
}

/** ADMIN_TOKEN, else the token the services generated in DATA_DIR (embedded mode). */
export function adminToken(env: NodeJS.ProcessEnv): string {
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN;
  const file = path.resolve(env.DATA_DIR || '.data', 'admin-token');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    throw new CliError(
      `No admin token: set ADMIN_TOKEN, or start the services once (pnpm start) so they create ${file}.`,
    );
  }
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface AdminClient {
  call<T>(service: ServiceName, method: Method, route: string, body?: unknown): Promise<T>;
}

/** `?a=1&b=2` of the given values, leaving out the undefined ones. */
export function queryString(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined) params.set(k, v);
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function createAdminClient(env: NodeJS.ProcessEnv): AdminClient {
  return {
    async call<T>(service: ServiceName, method: Method, route: string, body?: unknown): Promise<T> {
      const url = `${adminUrl(service, env)}/admin${route}`;
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers: {
            authorization: `Bearer ${adminToken(env)}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(15000),
        });
      } catch (err) {
        if (err instanceof CliError) throw err;
        throw new CliError(`Cannot reach the ${service} admin API at ${url}: is the service running (pnpm start)?`);
      }
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : {};
      } catch {
        throw new CliError(`The ${service} admin API answered ${response.status} with a body that is not JSON.`);
      }
      if (!response.ok) {
        const e = parsed as { code?: string; detail?: string; attribute?: string | null };
        const where = e.attribute ? ` (${e.attribute})` : '';
        throw new CliError(`${e.detail ?? `HTTP ${response.status}`}${where} [${e.code ?? response.status}]`);
      }
      return parsed as T;
    },
  };
}
