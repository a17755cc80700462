import './tracing';
import path from 'node:path';
import { runStandalone, type ServiceDefinition } from '@attest/common';
import { buildApp } from './app';
import { loadPricesConfig, type PricesConfig } from './config';

export const pricesService: ServiceDefinition<PricesConfig> = {
  name: 'prices',
  migrationsDir: path.join(__dirname, '..', 'migrations'),
  loadConfig: loadPricesConfig,
  listen: (config) => ({
    port: config.PRICES_PORT,
    adminPort: config.PRICES_ADMIN_PORT,
    portVariables: { port: 'PRICES_PORT', adminPort: 'PRICES_ADMIN_PORT' },
    publicUrl: config.PRICES_URL,
  }),
  build: buildApp,
};

if (require.main === module) void runStandalone(pricesService);
