import { isIP } from 'node:net';
import Joi from 'joi';
import { parseAdminTokens } from './audit/admin-tokens';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid environment: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
const TRUST_PROXY_MESSAGE =
  '{{#label}} must be true, false, a hop count, or a comma-separated list of proxy addresses, CIDRs ' +
  "or the names loopback, linklocal, uniquelocal (got '{{#value}}')";

/** Why one entry of a TRUST_PROXY list is not an address, a CIDR or a name express knows; null when it is. */
function proxyEntryProblem(entry: string): string | null {
  if (PROXY_NAMES.has(entry)) return null;
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (!family || extra !== undefined) return `not an address: ${entry}`;
  if (prefix === undefined) return null;
  const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
  return bits <= (family === 4 ? 32 : 128) ? null : `bad prefix length: ${entry}`;
}

/** Null for a valid TRUST_PROXY value, else what is wrong with it. */
export function trustProxyProblem(value: string): string | null {
  if (value === 'true' || value === 'false' || /^\d+$/.test(value)) return null;
  const entries = value.split(',').map((e) => e.trim());
  if (entries.some((e) => e === '')) return 'empty entry';
  for (const entry of entries) {
    const problem = proxyEntryProblem(entry);
    if (problem) return problem;
  }
  return null;
}

/** Environment variables every service reads. */
export const commonEnv = {
  DATABASE_URL: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .messages({
      'string.uriCustomScheme': '{{#label}} must be a postgres:// URL',
      'string.uri': '{{#label}} must be a postgres:// URL',
    }),
  // connections each service process keeps to DATABASE_URL at most (embedded Postgres: ignored)
  DATABASE_POOL_SIZE: Joi.number().integer().min(1).max(1000).default(10).messages({
    'number.base': '{{#label}} must be a whole number from 1 to 1000 (got {{#value}})',
    'number.integer': '{{#label}} must be a whole number from 1 to 1000 (got {{#value}})',
    'number.min': '{{#label}} must be a whole number from 1 to 1000 (got {{#value}})',
    'number.max': '{{#label}} must be a whole number from 1 to 1000 (got {{#value}})',
  }),
  REDIS_URL: Joi.string()
    .uri({ scheme: ['redis', 'rediss'] })
    .messages({
      'string.uriCustomScheme': '{{#label}} must be a redis:// URL',
      'string.uri': '{{#label}} must be a redis:// URL',
    }),
  DATA_DIR: Joi.string().default('.data'),
  LOG_LEVEL: Joi.string().valid('silent', 'error', 'warn', 'info', 'debug').default('info'),
  // json for log collectors (the images); pretty on a terminal (pnpm start defaults to auto)
  LOG_FORMAT: Joi.string().valid('auto', 'json', 'pretty').default('json'),
  ADMIN_TOKEN: Joi.string().min(24).messages({ 'string.min': '{{#label}} must be at least 24 characters' }),
  ADMIN_TOKENS: Joi.string().custom((value: string, helpers) => {
    const parsed = parseAdminTokens(value);
    return typeof parsed === 'string' ? helpers.message({ custom: `ADMIN_TOKENS: ${parsed}` }) : value;
  }),
  AUDIT_RETENTION_DAYS: Joi.number().integer().min(1).max(36500).default(365),
  ADMIN_HOST: Joi.string().hostname().default('127.0.0.1'),
  TRUST_PROXY: Joi.string()
    .custom((value: string, helpers) => (trustProxyProblem(value) ? helpers.error('any.invalid') : value))
    .default('false')
    .messages({ 'any.invalid': TRUST_PROXY_MESSAGE }),
  SHUTDOWN_DELAY_MS: Joi.number().integer().min(0).max(120000).default(0),
  SHUTDOWN_TIMEOUT_MS: Joi.number().integer().min(0).max(120000).default(4000),
  BODY_LIMIT: Joi.string()
    .pattern(/^\d+(b|kb|mb)$/)
    .default('100kb'),
  MIGRATE_ON_START: Joi.boolean().default(true),
};

export const port = (fallback: number) =>
  Joi.number().port().default(fallback).messages({
    'number.base': '{{#label}} must be a port number (got {{#value}})',
    'number.port': '{{#label}} must be a port number (got {{#value}})',
  });

export const publicUrl = (fallback: string) =>
  Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default(fallback)
    .custom((v: string) => v.replace(/\/+$/, ''))
    .messages({
      'string.uriCustomScheme': '{{#label}} must be an http(s) URL',
      'string.uri': '{{#label}} must be an http(s) URL',
    });

/** Validates the environment against one schema, naming every bad variable at once. */
export function loadEnv<T>(keys: Record<string, Joi.Schema>, env: NodeJS.ProcessEnv): Readonly<T> {
  const present = Object.fromEntries(Object.entries(env).filter(([k, v]) => k in keys && v !== undefined && v !== ''));
  const { value, error } = Joi.object(keys).validate(present, { abortEarly: false, convert: true });
  if (error) throw new ConfigError(error.details.map((d) => d.message.replace(/"/g, '')));
  return Object.freeze(value as T);
}

export interface CommonConfig {
  DATABASE_URL?: string;
  /** The most connections this process keeps to DATABASE_URL (10 unless set). */
  DATABASE_POOL_SIZE?: number;
  REDIS_URL?: string;
  DATA_DIR: string;
  LOG_LEVEL: 'silent' | 'error' | 'warn' | 'info' | 'debug';
  /** json: one JSON document a line; pretty: one readable line; auto: pretty on a terminal, else JSON. */
  LOG_FORMAT?: 'auto' | 'json' | 'pretty';
  ADMIN_TOKEN?: string;
  /** Named operator tokens, `name:token,name:token`. */
  ADMIN_TOKENS?: string;
  /** Audit events older than this are purged. */
  AUDIT_RETENTION_DAYS: number;
  ADMIN_HOST: string;
  TRUST_PROXY: string;
  /** After SIGTERM, keep serving this long with /readyz at 503 (load balancers need a few seconds). */
  SHUTDOWN_DELAY_MS: number;
  SHUTDOWN_TIMEOUT_MS: number;
  BODY_LIMIT: string;
  /** Migrate the schema at start (true, the default), or only check that a `migrate` step has done it (false). */
  MIGRATE_ON_START?: boolean;
}

/**
 * Express's `trust proxy` value for a TRUST_PROXY string: true, false, a hop count, or a list of proxy
 * addresses, CIDRs and names. A hop count trusts whoever connects; a list trusts only those peers.
 */
export function trustProxySetting(value: string): boolean | number | string[] {
  const problem = trustProxyProblem(value);
  if (problem) throw new ConfigError([`TRUST_PROXY is invalid (${problem})`]);
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((e) => e.trim());
}

const failureCount = (fallback: number) => Joi.number().integer().min(1).max(1000000).default(fallback);

/** Limits on failed authentication (identity and transactions); see README "Configuration". */
export const failureLimitEnv = {
  AUTH_FAILURE_WINDOW_SECONDS: Joi.number().integer().min(1).max(86400).default(900),
  AUTH_FAILURES_PER_ID_AND_ADDRESS: failureCount(10),
  AUTH_FAILURES_PER_ID: failureCount(100),
  AUTH_FAILURES_PER_ADDRESS: failureCount(200),
};

export interface FailureLimitConfig {
  AUTH_FAILURE_WINDOW_SECONDS: number;
  AUTH_FAILURES_PER_ID_AND_ADDRESS: number;
  AUTH_FAILURES_PER_ID: number;
  AUTH_FAILURES_PER_ADDRESS: number;
}
