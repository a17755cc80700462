import Joi from 'joi';
import {
  ConfigError,
  commonEnv,
  failureLimitEnv,
  loadEnv,
  outboundUrlProblem,
  port,
  publicUrl,
  resolveSecret,
  type CommonConfig,
  type FailureLimitConfig,
  type OutboundPolicy,
} from '@attest/common';
import type { Finality } from './chain';
import { DEFAULT_CHAIN_TOKENS, parseChainTokens, type ChainTokens } from './kernel/chain-tokens';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from './webhooks';
import { relayerKey } from './x402';

export interface TransactionsEnv extends CommonConfig, FailureLimitConfig {
  TRANSACTIONS_PORT: number;
  TRANSACTIONS_ADMIN_PORT: number;
  API_URL: string;
  API_KEY_SECRET?: string;
  API_KEY_CACHE_SECONDS: number;
  /** One JSON-RPC URL, or several separated by commas (tried in order, failing over). */
  CHAIN_RPC_URL?: string;
  /** How many of the RPCs must return the same hash for the block that decides a payment. */
  CHAIN_RPC_QUORUM: number;
  CHAIN_RPC_TIMEOUT_MS: number;
  /** Blocks per eth_getLogs request when the watcher scans (and catches up). */
  CHAIN_SCAN_BLOCKS: number;
  /** Final blocks left unscanned beyond which /readyz reports the chain check as degraded. */
  CHAIN_MAX_LAG_BLOCKS: number;
  CHAIN_NAME: string;
  /** The older name of a number of confirmations in CHAIN_FINALITY. */
  CHAIN_CONFIRMATIONS?: number;
  CHAIN_FINALITY?: Finality;
  CHAIN_TOKENS: ChainTokens;
  /** Chain name → EIP-155 chain id, for the EIP-681 payment URIs of payment requests. */
  CHAIN_IDS: Readonly<Record<string, number>>;
  CHAIN_DROP_TIMEOUT_SECONDS: number;
  CHAIN_POLL_INTERVAL_MS: number;
  KEY_ENCRYPTION_KEY?: string;
  WEBHOOK_RETRY_SCHEDULE: string;
  WEBHOOK_ALLOW_PRIVATE?: boolean;
  WEBHOOK_POLL_INTERVAL_MS: number;
  /** The prices service's public URL (the same variable it serves at): fiat-priced payment requests are converted there. */
  PRICES_URL: string;
  PAYMENT_PRICE_MAX_AGE_SECONDS: number;
  PAYMENT_REQUEST_SWEEP_INTERVAL_MS: number;
  /** Days an event is kept for the events list and redelivery (an event a delivery still waits to send stays). */
  WEBHOOK_EVENT_RETENTION_DAYS: number;
  /** Days a finished delivery and its attempt log are kept; WEBHOOK_EVENT_RETENTION_DAYS when unset. */
  WEBHOOK_DELIVERY_RETENTION_DAYS?: number;
  /** The x402 relayer's private key, sealed with KEY_ENCRYPTION_KEY (v1.…) or 0x-hex; settle refuses without one. */
  X402_RELAYER_KEY?: string;
  /** Wei: below it the relayer's balance is logged as a warning. */
  X402_RELAYER_MIN_BALANCE: string;
  /** x402 settlements one app may claim per minute. */
  X402_SETTLEMENTS_PER_MINUTE: number;
  /** The largest amount one x402 payment may carry, in 6 decimals (as token_amount); no limit when unset. */
  X402_MAX_AMOUNT?: string;
  /** The smallest x402 payment settled (6 decimals): each costs the relayer gas. */
  X402_MIN_AMOUNT: string;
  /** How long a settle waits for its transaction's receipt. */
  X402_RECEIPT_TIMEOUT_SECONDS: number;
  /**
   * The identity service's issuer (its BASE_URL): x402's attest-human extension accepts the delegated tokens it
   * issued. Unset: a seller that asks for the human behind the agent is refused (human_proof_not_configured).
   */
  X402_IDENTITY_ISSUER?: string;
  /** Where its JWK Set is fetched; X402_IDENTITY_ISSUER + /jwks when unset. */
  X402_IDENTITY_JWKS_URL?: string;
}

export interface TransactionsConfig extends TransactionsEnv {
  /** CHAIN_RPC_URL split at commas: the watcher's RPCs in the order they are tried. */
  chainRpcUrls: string[];
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
  /** WEBHOOK_DELIVERY_RETENTION_DAYS, else WEBHOOK_EVENT_RETENTION_DAYS. */
  webhookDeliveryRetentionDays: number;
  /**
   * The identity service's JWK Set for x402's attest-human extension (X402_IDENTITY_ISSUER), and how it is
   * fetched: the operator's own service, so a private address is allowed; plain http only in embedded mode, to
   * loopback. Null when X402_IDENTITY_ISSUER is not set.
   */
  x402Identity: { issuer: string; jwksUrl: string; policy: OutboundPolicy } | null;
}

const retentionDays = Joi.number().integer().min(1).max(3650).messages({
  'number.base': '{{#label}} must be a whole number of days from 1 to 3650',
  'number.integer': '{{#label}} must be a whole number of days from 1 to 3650',
  'number.min': '{{#label}} must be a whole number of days from 1 to 3650',
  'number.max': '{{#label}} must be a whole number of days from 1 to 3650',
});

const schema = {
  ...commonEnv,
  ...failureLimitEnv,
  TRANSACTIONS_PORT: port(4001),
  TRANSACTIONS_ADMIN_PORT: port(4101),
  API_URL: publicUrl('http://localhost:4001'),
  API_KEY_SECRET: Joi.string().min(32).messages({ 'string.min': '{{#label}} must be at least 32 characters' }),
  API_KEY_CACHE_SECONDS: Joi.number().integer().min(0).max(60).default(5),
  CHAIN_RPC_URL: Joi.string().custom((value: string, helpers) => {
    const problem = rpcUrlsProblem(value);
    return problem ? helpers.message({ custom: `{{#label}} ${problem}` }) : value;
  }),
  CHAIN_RPC_QUORUM: Joi.number().integer().min(1).max(10).default(1),
  CHAIN_RPC_TIMEOUT_MS: Joi.number().integer().min(100).max(120000).default(10000),
  CHAIN_SCAN_BLOCKS: Joi.number().integer().min(1).max(100000).default(100),
  CHAIN_MAX_LAG_BLOCKS: Joi.number().integer().min(1).default(100),
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
  CHAIN_IDS: Joi.string()
    .custom((value: string, helpers) => {
      let raw: unknown;
      try {
        raw = JSON.parse(value);
      } catch {
        return helpers.message({ custom: '{{#label}} must be JSON such as {"worldchain":480}' });
      }
      const ok =
        typeof raw === 'object' &&
        raw !== null &&
        !Array.isArray(raw) &&
        Object.values(raw).every((id) => Number.isSafeInteger(id) && (id as number) > 0);
      return ok
        ? raw
        : helpers.message({ custom: '{{#label}} must map chain names to chain ids, such as {"worldchain":480}' });
    })
    .default({ worldchain: 480 }),
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
  PRICES_URL: publicUrl('http://localhost:4002'),
  PAYMENT_PRICE_MAX_AGE_SECONDS: Joi.number().integer().min(5).max(3600).default(300),
  PAYMENT_REQUEST_SWEEP_INTERVAL_MS: Joi.number().integer().min(100).max(3600000).default(30000),
  WEBHOOK_EVENT_RETENTION_DAYS: retentionDays.default(30),
  WEBHOOK_DELIVERY_RETENTION_DAYS: retentionDays,
  // the key's value is never repeated in a message
  X402_RELAYER_KEY: Joi.string()
    .pattern(/^(v1\.[\w.-]+|0x[0-9a-fA-F]{64})$/)
    .messages({
      'string.pattern.base':
        '{{#label}} must be a private key (0x and 64 hexadecimal digits) or one sealed with KEY_ENCRYPTION_KEY (v1.…)',
    }),
  X402_RELAYER_MIN_BALANCE: Joi.string()
    .pattern(/^\d{1,40}$/)
    .default('10000000000000000')
    .messages({ 'string.pattern.base': '{{#label}} must be a whole number of wei' }),
  X402_SETTLEMENTS_PER_MINUTE: Joi.number().integer().min(1).max(100000).default(60),
  X402_MAX_AMOUNT: Joi.string()
    .pattern(/^[1-9]\d{0,77}$/)
    .messages({
      'string.pattern.base': '{{#label}} must be a positive integer: the amount times 10^6, as token_amount',
    }),
  X402_MIN_AMOUNT: Joi.string()
    .pattern(/^[1-9]\d{0,77}$/)
    .default('1000')
    .messages({
      'string.pattern.base': '{{#label}} must be a positive integer: the amount times 10^6, as token_amount',
    }),
  X402_RECEIPT_TIMEOUT_SECONDS: Joi.number().integer().min(1).max(600).default(25),
  X402_IDENTITY_ISSUER: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .custom((v: string) => v.replace(/\/+$/, ''))
    .messages({
      'string.uriCustomScheme': '{{#label}} must be an http(s) URL',
      'string.uri': '{{#label}} must be an http(s) URL',
    }),
  X402_IDENTITY_JWKS_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .messages({
      'string.uriCustomScheme': '{{#label}} must be an http(s) URL',
      'string.uri': '{{#label}} must be an http(s) URL',
    }),
};

const splitUrls = (value: string) => value.split(',').map((url) => url.trim());

/** Why CHAIN_RPC_URL is not one URL or a comma-separated list of distinct http(s)/ws(s) URLs; null when it is. */
function rpcUrlsProblem(value: string): string | null {
  const urls = splitUrls(value);
  // the URLs are not repeated in the message: a provider's URL often carries its API key
  for (const [i, url] of urls.entries()) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return `must be a URL or URLs separated by commas (entry ${i + 1} is not a URL)`;
    }
    if (!['http:', 'https:', 'ws:', 'wss:'].includes(parsed.protocol))
      return `must hold http, https, ws or wss URLs (got ${parsed.protocol.slice(0, -1)})`;
  }
  return new Set(urls).size === urls.length ? null : 'names the same URL twice';
}

export function loadTransactionsConfig(env: NodeJS.ProcessEnv): Readonly<TransactionsConfig> {
  const base = loadEnv<TransactionsEnv>(schema, env);
  const chainRpcUrls = base.CHAIN_RPC_URL ? splitUrls(base.CHAIN_RPC_URL) : [];
  const problems: string[] = [];
  if (base.CHAIN_RPC_URL && !base.CHAIN_TOKENS[base.CHAIN_NAME])
    problems.push(
      `CHAIN_TOKENS has no tokens for CHAIN_NAME ${base.CHAIN_NAME}, so the watcher could verify no payment`,
    );
  if (base.CHAIN_RPC_URL && base.CHAIN_RPC_QUORUM > chainRpcUrls.length)
    problems.push(
      `CHAIN_RPC_QUORUM is ${base.CHAIN_RPC_QUORUM} but CHAIN_RPC_URL names ${chainRpcUrls.length} RPC URL(s); the quorum can be at most their number`,
    );
  const keyEncryptionKey = () =>
    resolveSecret(
      'KEY_ENCRYPTION_KEY',
      base.KEY_ENCRYPTION_KEY,
      base.DATA_DIR,
      'transactions/key-encryption-key',
      !base.DATABASE_URL,
    );
  if (base.X402_RELAYER_KEY) {
    const key = relayerKey(base.X402_RELAYER_KEY, keyEncryptionKey());
    if (typeof key !== 'string') problems.push(key.problem);
  }
  if (base.X402_IDENTITY_JWKS_URL && !base.X402_IDENTITY_ISSUER)
    problems.push('X402_IDENTITY_JWKS_URL is set without X402_IDENTITY_ISSUER (the issuer its tokens must name)');
  const x402Identity = base.X402_IDENTITY_ISSUER
    ? {
        issuer: base.X402_IDENTITY_ISSUER,
        jwksUrl: base.X402_IDENTITY_JWKS_URL ?? `${base.X402_IDENTITY_ISSUER}/jwks`,
        // the operator's own service: a private address is fine; plain http only in embedded mode, to loopback
        policy: { allowHttp: !base.DATABASE_URL, allowPrivate: true, allowPrivateSetting: 'X402_IDENTITY_JWKS_URL' },
      }
    : null;
  const jwksProblem =
    x402Identity && outboundUrlProblem(x402Identity.jwksUrl, 'the identity JWKS URL', x402Identity.policy);
  if (jwksProblem)
    problems.push(`${jwksProblem.replace(/\.$/, '')} (X402_IDENTITY_JWKS_URL, else X402_IDENTITY_ISSUER + /jwks)`);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze({
    ...base,
    chainRpcUrls,
    chainFinality: base.CHAIN_FINALITY ?? base.CHAIN_CONFIRMATIONS ?? 'safe',
    apiKeySecret: resolveSecret(
      'API_KEY_SECRET',
      base.API_KEY_SECRET,
      base.DATA_DIR,
      'transactions/api-key-secret',
      !base.DATABASE_URL,
    ),
    keyEncryptionKey: keyEncryptionKey(),
    webhookRetrySchedule: parseRetrySchedule(base.WEBHOOK_RETRY_SCHEDULE)!,
    webhookDeliveryRetentionDays: base.WEBHOOK_DELIVERY_RETENTION_DAYS ?? base.WEBHOOK_EVENT_RETENTION_DAYS,
    x402Identity,
    // embedded mode is local use: a receiver on this machine must work (plain http to loopback, private
    // addresses); with a database, deliveries leave the machine: https, and public addresses unless allowed
    webhookTargets: {
      allowHttp: !base.DATABASE_URL,
      allowPrivate: base.WEBHOOK_ALLOW_PRIVATE ?? !base.DATABASE_URL,
      allowPrivateSetting: 'WEBHOOK_ALLOW_PRIVATE',
    },
  });
}
