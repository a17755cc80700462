import Joi from 'joi';
import {
  ConfigError,
  commonEnv,
  failureLimitEnv,
  loadEnv,
  port,
  publicUrl,
  resolveSecret,
  type CommonConfig,
  type FailureLimitConfig,
  type OutboundPolicy,
} from '@attest/common';
import { DEFAULT_CHAIN_TOKENS, parseChainTokens, type ChainTokens } from './chain/chain-tokens';
import type { Finality } from './chain/verify-transfer';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from './domain/webhook-schedule';

export interface TransactionsEnv extends CommonConfig, FailureLimitConfig {
  TRANSACTIONS_PORT: number;
  TRANSACTIONS_ADMIN_PORT: number;
  API_URL: string;
  API_KEY_SECRET?: string;
  API_KEY_CACHE_SECONDS: number;
  CHAIN_RPC_URL?: string;
  CHAIN_NAME: string;
  /** The older name of a number of confirmations in CHAIN_FINALITY. */
  CHAIN_CONFIRMATIONS?: number;
  CHAIN_FINALITY?: Finality;
  CHAIN_TOKENS: ChainTokens;
  CHAIN_DROP_TIMEOUT_SECONDS: number;
  CHAIN_POLL_INTERVAL_MS: number;
  KEY_ENCRYPTION_KEY?: string;
  WEBHOOK_RETRY_SCHEDULE: string;
  WEBHOOK_ALLOW_PRIVATE?: boolean;
  WEBHOOK_POLL_INTERVAL_MS: number;
}

export interface TransactionsConfig extends TransactionsEnv {
  /** Keys the API-key hashes; from API_KEY_SECRET or generated (embedded). */
  apiKeySecret: string;
  /** When the watcher takes a block as final: CHAIN_FINALITY, else CHAIN_CONFIRMATIONS, else `safe`. */
  chainFinality: Finality;
  /** Seals webhook secrets at rest; from KEY_ENCRYPTION_KEY or generated (embedded). */
  keyEncryptionKey: string;
  /** Seconds before each retry of a failed webhook delivery. */
  webhookRetrySchedule: number[];
  /** Where webhook endpoints may point: http only in embedded mode, private addresses per WEBHOOK_ALLOW_PRIVATE. */
  webhookTargets: OutboundPolicy;
}

const schema = {
  ...commonEnv,
  ...failureLimitEnv,
  TRANSACTIONS_PORT: port(4001),
  TRANSACTIONS_ADMIN_PORT: port(4101),
  API_URL: publicUrl('http://localhost:4001'),
  API_KEY_SECRET: Joi.string().min(32).messages({ 'string.min': '{{#label}} must be at least 32 characters' }),
  API_KEY_CACHE_SECONDS: Joi.number().integer().min(0).max(60).default(5),
  CHAIN_RPC_URL: Joi.string().uri({ scheme: ['http', 'https', 'ws', 'wss'] }),
  CHAIN_NAME: Joi.string()
    .pattern(/^[a-z0-9-]{1,50}$/)
    .default('worldchain'),
  CHAIN_CONFIRMATIONS: Joi.number().integer().min(1).max(1000),
  CHAIN_FINALITY: Joi.string()
    .custom((value: string, helpers) => {
      if (value === 'safe' || value === 'finalized') return value;
      const confirmations = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
      return confirmations >= 1 && confirmations <= 1000 ? confirmations : helpers.error('any.invalid');
    })
    .messages({
      'any.invalid': '{{#label}} must be a number of confirmations (1 to 1000), safe or finalized (got {{#value}})',
    }),
  CHAIN_TOKENS: Joi.string()
    .custom((value: string, helpers) => {
      const tokens = parseChainTokens(value);
      return typeof tokens === 'string' ? helpers.message({ custom: `{{#label}} ${tokens}` }) : tokens;
    })
    .default(DEFAULT_CHAIN_TOKENS),
  CHAIN_DROP_TIMEOUT_SECONDS: Joi.number().integer().min(1).default(1800),
  CHAIN_POLL_INTERVAL_MS: Joi.number().integer().min(100).default(5000),
  KEY_ENCRYPTION_KEY: Joi.string().min(32).messages({ 'string.min': '{{#label}} must be at least 32 characters' }),
  WEBHOOK_RETRY_SCHEDULE: Joi.string()
    .custom((v: string, helpers) => (parseRetrySchedule(v) ? v : helpers.error('any.invalid')))
    .default(DEFAULT_RETRY_SCHEDULE.join(','))
    .messages({
      'any.invalid': '{{#label}} must be comma-separated whole seconds, such as 5,300,1800 (got {{#value}})',
    }),
  WEBHOOK_ALLOW_PRIVATE: Joi.boolean().messages({ 'boolean.base': '{{#label}} must be true or false' }),
  WEBHOOK_POLL_INTERVAL_MS: Joi.number().integer().min(10).max(60000).default(2000),
};

export function loadTransactionsConfig(env: NodeJS.ProcessEnv): Readonly<TransactionsConfig> {
  const base = loadEnv<TransactionsEnv>(schema, env);
  if (base.CHAIN_RPC_URL && !base.CHAIN_TOKENS[base.CHAIN_NAME])
    throw new ConfigError([
      `CHAIN_TOKENS has no tokens for CHAIN_NAME ${base.CHAIN_NAME}, so the watcher could verify no payment`,
    ]);
  return Object.freeze({
    ...base,
    chainFinality: base.CHAIN_FINALITY ?? base.CHAIN_CONFIRMATIONS ?? 'safe',
    apiKeySecret: resolveSecret(
      'API_KEY_SECRET',
      base.API_KEY_SECRET,
      base.DATA_DIR,
      'transactions/api-key-secret',
      !base.DATABASE_URL,
    ),
    keyEncryptionKey: resolveSecret(
      'KEY_ENCRYPTION_KEY',
      base.KEY_ENCRYPTION_KEY,
      base.DATA_DIR,
      'transactions/key-encryption-key',
      !base.DATABASE_URL,
    ),
    webhookRetrySchedule: parseRetrySchedule(base.WEBHOOK_RETRY_SCHEDULE)!,
    // embedded mode is local use: a receiver on this machine must work (plain http to loopback, private
    // addresses); with a database, deliveries leave the machine: https, and public addresses unless allowed
    webhookTargets: {
      allowHttp: !base.DATABASE_URL,
      allowPrivate: base.WEBHOOK_ALLOW_PRIVATE ?? !base.DATABASE_URL,
      allowPrivateSetting: 'WEBHOOK_ALLOW_PRIVATE',
    },
  });
}
