import './tracing';
import { defineService, runStandalone, type ServiceDefinition } from '@attest/common';
import { buildApp } from './app';
import { loadPricesConfig, type PricesConfig } from './config';

export const pricesService: ServiceDefinition<PricesConfig> = defineService({
  name: 'prices',
  dir: __dirname,
  loadConfig: loadPricesConfig,
  port: 'PRICES_PORT',
  adminPort: 'PRICES_ADMIN_PORT',
  publicUrl: 'PRICES_URL',
  build: buildApp,
});

if (require.main === module) void runStandalone(pricesService);
