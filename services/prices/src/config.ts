import Joi from 'joi';
import { commonEnv, loadEnv, port, publicUrl, type CommonConfig } from '@attest/common';

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
  FX_HTTP_URL?: string;
}

const schema = {
  ...commonEnv,
  PRICES_PORT: port(4002),
  PRICES_ADMIN_PORT: port(4102),
  PRICES_URL: publicUrl('http://localhost:4002'),
  NATIVE_TOKEN: Joi.string().pattern(/^[A-Za-z0-9]{2,12}$/).uppercase().default('WLD'),
  PRICE_MAX_AGE_SECONDS: Joi.number().integer().min(1).default(900),
  PRICE_CACHE_MAX_AGE_SECONDS: Joi.number().integer().min(0).max(3600).default(30),
  PRICE_FEEDS: Joi.string().pattern(/^(seed|http|fx)(,(seed|http|fx))*$/).default('seed'),
  PRICE_FEED_INTERVAL_SECONDS: Joi.number().integer().min(1).default(60),
  PRICE_SEED_FILE: Joi.string(),
  PRICE_HTTP_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  PRICE_HTTP_TIMEOUT_MS: Joi.number().integer().min(100).max(60000).default(5000),
  PRICE_HTTP_RETRIES: Joi.number().integer().min(0).max(10).default(3),
  FX_HTTP_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
};

export function loadPricesConfig(env: NodeJS.ProcessEnv): Readonly<PricesConfig> {
  return loadEnv<PricesConfig>(schema, env);
}
