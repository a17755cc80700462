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
}

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
    .pattern(/^(seed|http|fx)(,(seed|http|fx))*$/)
    .default('seed'),
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
};

export function loadPricesConfig(env: NodeJS.ProcessEnv): Readonly<PricesConfig> {
  const config = loadEnv<PricesConfig>(schema, env);
  const feeds = config.PRICE_FEEDS.split(',');
  const problems: string[] = [];
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
