import Joi from 'joi';
import { commonEnv, ConfigError, loadEnv, port, publicUrl, type CommonConfig } from '@attest/common';

export interface PricesConfig extends CommonConfig {
  PRICES_PORT: number;
  PRICES_ADMIN_PORT: number;
  PRICES_URL: string;
  NATIVE_TOKEN: string;
  PRICE_MAX_AGE_SECONDS: number;
  PRICE_CACHE_MAX_AGE_SECONDS: number;
  PRICE_FEEDS: string;
  PRICE_FEED_INTERVAL_SECONDS: number;
  PRICE_SEED_FILE?: string;
  PRICE_HTTP_URL?: string;
  PRICE_HTTP_TIMEOUT_MS: number;
  PRICE_HTTP_RETRIES: number;
  PRICE_HTTP_BACKOFF_MS: number;
  PRICE_HTTP_IDS: string;
  PRICE_HTTP_FIATS: string;
  /** A header sent to the price API with every request, e.g. an API key (x-cg-demo-api-key). */
  PRICE_HTTP_HEADER_NAME?: string;
  PRICE_HTTP_HEADER_VALUE?: string;
  FX_HTTP_URL?: string;
  /** Serve the seed feed's fixed demo prices even with a real database (refused otherwise). */
  PRICE_FEEDS_ALLOW_SEED: boolean;
  /** More HTTP price sources, each read through its own mapping; named in PRICE_FEEDS to run. */
  PRICE_SOURCES: PriceSourceConfig[];
  /** Fewest fresh market sources agreeing within PRICE_MAX_DEVIATION_PERCENT that make a price. */
  PRICE_SOURCE_QUORUM: number;
  PRICE_MAX_DEVIATION_PERCENT: number;
  /** Public price API requests per client address per minute, counted per replica; 0: no limit. */
  PRICE_RATE_LIMIT_PER_MINUTE: number;
  /** Token code → CAIP-19 asset id, e.g. WLD=eip155:480/erc20:0x2cfc…: tokens may be named by either. */
  PRICE_ASSET_IDS: string;
  /** Quotes and FX rates observed longer ago are purged (the latest of each source is kept). */
  PRICE_QUOTE_RETENTION_DAYS: number;
  /** Open price streams (SSE) per replica, and per client address on a replica. */
  PRICE_STREAM_MAX_CONNECTIONS: number;
  PRICE_STREAM_MAX_PER_ADDRESS: number;
  PRICE_STREAM_HEARTBEAT_SECONDS: number;
}

/** One entry of PRICE_SOURCES (JSON): where to ask, and where the answer holds each price and its time. */
export interface PriceSourceConfig {
  name: string;
  /** `{ids}` and `{fiats}` (lower case) / `{FIATS}` are replaced by comma-separated lists. */
  url: string;
  /** Token code → the source's id. */
  ids: Record<string, string>;
  /** Defaults to PRICE_HTTP_FIATS. */
  fiats?: string[];
  /** Dot-separated path to the price; keys may hold `{id}`, `{fiat}`, `{FIAT}`. */
  price: string;
  /** The same, to the source's observation time (Unix seconds or ms, or ISO 8601); absent: the fetch time. */
  time?: string;
  /** Extra request headers (an API key); never logged. */
  headers?: Record<string, string>;
}

const BUILT_IN_FEEDS = ['seed', 'http', 'fx'];
const PATH = Joi.string()
  .pattern(/^[^.\s]+(\.[^.\s]+)*$/)
  .max(200);
const sourceSchema = Joi.object<PriceSourceConfig>({
  name: Joi.string()
    .pattern(/^[a-z][a-z0-9-]{0,30}$/)
    .invalid(...BUILT_IN_FEEDS, 'manual')
    .required(),
  url: Joi.string()
    .max(2000)
    .required()
    .custom((value: string, helpers) => {
      try {
        const url = new URL(value.replace(/\{(ids|fiats|FIATS)\}/g, 'x'));
        if (url.protocol === 'http:' || url.protocol === 'https:') return value;
      } catch {
        // reported below
      }
      return helpers.error('string.uri');
    })
    .messages({ 'string.uri': '{{#label}} must be an http or https URL' }),
  ids: Joi.object()
    .pattern(/^[A-Za-z0-9]{2,12}$/, Joi.string().pattern(/^[\w.-]+$/))
    .min(1)
    .required(),
  fiats: Joi.array()
    .items(
      Joi.string()
        .pattern(/^[A-Za-z]{3}$/)
        .uppercase(),
    )
    .min(1),
  price: PATH.required(),
  time: PATH,
  headers: Joi.object().pattern(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, Joi.string().pattern(/^[\x20-\x7e]+$/)),
});

const schema = {
  ...commonEnv,
  PRICES_PORT: port(4002),
  PRICES_ADMIN_PORT: port(4102),
  PRICES_URL: publicUrl('http://localhost:4002'),
  NATIVE_TOKEN: Joi.string()
    .pattern(/^[A-Za-z0-9]{2,12}$/)
    .uppercase()
    .default('WLD'),
  PRICE_MAX_AGE_SECONDS: Joi.number().integer().min(1).default(900),
  PRICE_CACHE_MAX_AGE_SECONDS: Joi.number().integer().min(0).max(3600).default(30),
  PRICE_FEEDS: Joi.string()
    .pattern(/^[a-z][a-z0-9-]{0,30}(,[a-z][a-z0-9-]{0,30})*$/)
    .default('seed')
    .messages({ 'string.pattern.base': '{{#label}} must be a comma-separated list such as http,fx' }),
  PRICE_FEED_INTERVAL_SECONDS: Joi.number().integer().min(1).default(60),
  PRICE_SEED_FILE: Joi.string(),
  PRICE_HTTP_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  PRICE_HTTP_TIMEOUT_MS: Joi.number().integer().min(100).max(60000).default(5000),
  PRICE_HTTP_RETRIES: Joi.number().integer().min(0).max(10).default(3),
  PRICE_HTTP_BACKOFF_MS: Joi.number().integer().min(0).max(60000).default(250),
  PRICE_HTTP_IDS: Joi.string()
    .pattern(/^[A-Za-z0-9]+=[\w.-]+(,[A-Za-z0-9]+=[\w.-]+)*$/)
    .default('WLD=worldcoin-wld,USDCE=usd-coin,USDC=usd-coin,ETH=ethereum,WETH=weth')
    .messages({ 'string.pattern.base': '{{#label}} must look like WLD=worldcoin-wld,USDCE=usd-coin' }),
  PRICE_HTTP_FIATS: Joi.string()
    .pattern(/^[A-Za-z]{3}(,[A-Za-z]{3})*$/)
    .default('USD,EUR'),
  PRICE_HTTP_HEADER_NAME: Joi.string()
    .pattern(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/)
    .messages({ 'string.pattern.base': '{{#label}} must be an HTTP header name' }),
  PRICE_HTTP_HEADER_VALUE: Joi.string()
    .pattern(/^[\x20-\x7e]+$/)
    .messages({ 'string.pattern.base': '{{#label}} must be printable ASCII' }),
  FX_HTTP_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  PRICE_FEEDS_ALLOW_SEED: Joi.boolean().default(false),
  PRICE_SOURCES: Joi.string().default('[]'),
  PRICE_SOURCE_QUORUM: Joi.number().integer().min(1).max(20).default(1),
  PRICE_MAX_DEVIATION_PERCENT: Joi.number().min(0.01).max(100).default(5),
  PRICE_RATE_LIMIT_PER_MINUTE: Joi.number().integer().min(0).default(600),
  PRICE_ASSET_IDS: Joi.string()
    .allow('')
    .pattern(
      /^([A-Za-z0-9]{2,12}=[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}\/[-a-z0-9]{3,8}:[-.%a-zA-Z0-9]{1,128})(,[A-Za-z0-9]{2,12}=[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}\/[-a-z0-9]{3,8}:[-.%a-zA-Z0-9]{1,128})*$/,
    )
    .default(
      'WLD=eip155:480/erc20:0x2cfc85d8e48f8eab294be644d9e25c3030863003,' +
        'USDCE=eip155:480/erc20:0x79a02482a880bce3f13e09da970dc34db4cd24d1,' +
        'WETH=eip155:480/erc20:0x4200000000000000000000000000000000000006,ETH=eip155:1/slip44:60',
    )
    .messages({
      'string.pattern.base': '{{#label}} must look like WLD=eip155:480/erc20:0x2cfc…,ETH=eip155:1/slip44:60',
    }),
  PRICE_QUOTE_RETENTION_DAYS: Joi.number().integer().min(31).max(3650).default(35),
  PRICE_STREAM_MAX_CONNECTIONS: Joi.number().integer().min(1).default(20000),
  PRICE_STREAM_MAX_PER_ADDRESS: Joi.number().integer().min(1).default(10),
  PRICE_STREAM_HEARTBEAT_SECONDS: Joi.number().integer().min(1).max(300).default(15),
};

/** PRICE_ASSET_IDS as a map: token code (upper case) → CAIP-19 asset id. */
export const assetIds = (config: Pick<PricesConfig, 'PRICE_ASSET_IDS'>): Record<string, string> =>
  Object.fromEntries(
    config.PRICE_ASSET_IDS.split(',')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')).toUpperCase(), pair.slice(pair.indexOf('=') + 1)]),
  );

/** PRICE_SOURCES as configured: a JSON array of sources, each checked; problems are named. */
function parseSources(raw: unknown, problems: string[]): PriceSourceConfig[] {
  if (Array.isArray(raw)) return raw as PriceSourceConfig[];
  let json: unknown;
  try {
    json = JSON.parse(String(raw));
  } catch {
    problems.push('PRICE_SOURCES must be a JSON array of sources');
    return [];
  }
  const { value, error } = Joi.array().items(sourceSchema).unique('name').label('PRICE_SOURCES').validate(json);
  if (error) {
    problems.push(`PRICE_SOURCES: ${error.message}`);
    return [];
  }
  return value as PriceSourceConfig[];
}

export function loadPricesConfig(env: NodeJS.ProcessEnv): Readonly<PricesConfig> {
  const loaded = loadEnv<PricesConfig>(schema, env);
  const feeds = loaded.PRICE_FEEDS.split(',');
  const problems: string[] = [];
  const config: PricesConfig = { ...loaded, PRICE_SOURCES: parseSources(loaded.PRICE_SOURCES, problems) };
  for (const feed of feeds)
    if (!BUILT_IN_FEEDS.includes(feed) && !config.PRICE_SOURCES.some((s) => s.name === feed))
      problems.push(`PRICE_FEEDS names ${feed}, which is neither seed, http, fx nor a source in PRICE_SOURCES`);
  if (feeds.includes('http') && !config.PRICE_HTTP_URL)
    problems.push('PRICE_HTTP_URL is required when PRICE_FEEDS includes http');
  if (feeds.includes('fx') && !config.FX_HTTP_URL)
    problems.push('FX_HTTP_URL is required when PRICE_FEEDS includes fx');
  if (Boolean(config.PRICE_HTTP_HEADER_NAME) !== Boolean(config.PRICE_HTTP_HEADER_VALUE))
    problems.push('PRICE_HTTP_HEADER_NAME and PRICE_HTTP_HEADER_VALUE must be set together');
  if (feeds.includes('seed') && config.DATABASE_URL && !config.PRICE_FEEDS_ALLOW_SEED)
    problems.push(
      'PRICE_FEEDS includes seed (fixed demo prices) while DATABASE_URL is set: use PRICE_FEEDS=http,fx for real prices, ' +
        'or set PRICE_FEEDS_ALLOW_SEED=true to serve demo prices from this database',
    );
  if (problems.length) throw new ConfigError(problems);
  return config;
}
