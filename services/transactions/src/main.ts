import './tracing';
import { defineService, runStandalone, type ServiceDefinition } from '@attest/common';
import { buildApp } from './app';
import { loadTransactionsConfig, type TransactionsConfig } from './config';

export const transactionsService: ServiceDefinition<TransactionsConfig> = defineService({
  name: 'transactions',
  dir: __dirname,
  loadConfig: loadTransactionsConfig,
  port: 'TRANSACTIONS_PORT',
  adminPort: 'TRANSACTIONS_ADMIN_PORT',
  publicUrl: 'API_URL',
  build: buildApp,
});

if (require.main === module) void runStandalone(transactionsService);
