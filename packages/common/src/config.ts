import Joi from 'joi';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid environment: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/** Environment variables every service reads. */
export const commonEnv = {
  DATABASE_URL: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .messages({ 'string.uriCustomScheme': '{{#label}} must be a postgres:// URL', 'string.uri': '{{#label}} must be a postgres:// URL' }),
  REDIS_URL: Joi.string()
    .uri({ scheme: ['redis', 'rediss'] })
    .messages({ 'string.uriCustomScheme': '{{#label}} must be a redis:// URL', 'string.uri': '{{#label}} must be a redis:// URL' }),
  DATA_DIR: Joi.string().default('.data'),
  LOG_LEVEL: Joi.string().valid('silent', 'error', 'warn', 'info', 'debug').default('info'),
  ADMIN_TOKEN: Joi.string().min(24).messages({ 'string.min': '{{#label}} must be at least 24 characters' }),
  ADMIN_HOST: Joi.string().hostname().default('127.0.0.1'),
  TRUST_PROXY: Joi.string().pattern(/^(true|false|loopback|\d+|[0-9a-fA-F.:/, ]+)$/).default('false'),
  SHUTDOWN_DELAY_MS: Joi.number().integer().min(0).max(120000).default(0),
  SHUTDOWN_TIMEOUT_MS: Joi.number().integer().min(0).max(120000).default(4000),
  BODY_LIMIT: Joi.string().pattern(/^\d+(b|kb|mb)$/).default('100kb'),
};

export const port = (fallback: number) => Joi.number().port().default(fallback).messages({
  'number.base': '{{#label}} must be a port number (got {{#value}})',
  'number.port': '{{#label}} must be a port number (got {{#value}})',
});

export const publicUrl = (fallback: string) =>
  Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default(fallback)
    .custom((v: string) => v.replace(/\/+$/, ''))
    .messages({ 'string.uriCustomScheme': '{{#label}} must be an http(s) URL', 'string.uri': '{{#label}} must be an http(s) URL' });

/** Validates the environment against one schema, naming every bad variable at once. */
export function loadEnv<T>(keys: Record<string, Joi.Schema>, env: NodeJS.ProcessEnv): Readonly<T> {
  const present = Object.fromEntries(Object.entries(env).filter(([k, v]) => k in keys && v !== undefined && v !== ''));
  const { value, error } = Joi.object(keys).validate(present, { abortEarly: false, convert: true });
  if (error) throw new ConfigError(error.details.map((d) => d.message.replace(/"/g, '')));
  return Object.freeze(value as T);
}

export interface CommonConfig {
  DATABASE_URL?: string;
  REDIS_URL?: string;
  DATA_DIR: string;
  LOG_LEVEL: 'silent' | 'error' | 'warn' | 'info' | 'debug';
  ADMIN_TOKEN?: string;
  ADMIN_HOST: string;
  TRUST_PROXY: string;
  /** After SIGTERM, keep serving this long with /readyz at 503 (load balancers need a few seconds). */
  SHUTDOWN_DELAY_MS: number;
  SHUTDOWN_TIMEOUT_MS: number;
  BODY_LIMIT: string;
}

/** Express's `trust proxy` value for a TRUST_PROXY string. */
export function trustProxySetting(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
