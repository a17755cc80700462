import './tracing';
import path from 'node:path';
import { runStandalone, type ServiceDefinition } from '@attest/common';
import { buildApp } from './app';
import { loadTransactionsConfig, type TransactionsConfig } from './config';

export const transactionsService: ServiceDefinition<TransactionsConfig> = {
  name: 'transactions',
  migrationsDir: path.join(__dirname, '..', 'migrations'),
  loadConfig: loadTransactionsConfig,
  listen: (config) => ({
    port: config.TRANSACTIONS_PORT,
    adminPort: config.TRANSACTIONS_ADMIN_PORT,
    portVariables: { port: 'TRANSACTIONS_PORT', adminPort: 'TRANSACTIONS_ADMIN_PORT' },
    publicUrl: config.API_URL,
  }),
  build: buildApp,
};

if (require.main === module) void runStandalone(transactionsService);
