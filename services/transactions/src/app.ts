import {
  createServiceApps,
  credentialFailureLimiter,
  openApiRoute,
  type BuiltService,
  type ServiceDeps,
} from '@attest/common';
import { transactionsAdminRoutes } from './admin/admin-routes';
import { startChainWatcher } from './chain/start-watcher';
import type { TransactionsConfig } from './config';
import { ApiKeyService } from './domain/api-key-service';
import { TransactionService } from './domain/transactions';
import { transactionsOpenApi } from './routes/openapi-document';
import { transactionRoute } from './routes/transaction-route';
import { apiKeyStore } from './store/api-key-store';

/** Composition root: stores → domain → routes, the admin API, and the chain watcher when configured. */
export async function buildApp(deps: ServiceDeps<TransactionsConfig>): Promise<BuiltService> {
  const { config, storage, logger } = deps;
  const keyStore = apiKeyStore(storage.db);
  const apiKeys = new ApiKeyService(keyStore, storage.cache, config.apiKeySecret, config.API_KEY_CACHE_SECONDS, logger);
  const transactions = new TransactionService(storage.db, storage.cache, logger);
  const failures = credentialFailureLimiter(storage.cache, config);
  const watcher = config.CHAIN_RPC_URL ? await startChainWatcher(config, storage.db, transactions, logger) : undefined;
  const apps = createServiceApps({
    service: 'transactions',
    logger,
    readiness: deps.readiness,
    adminToken: deps.adminToken,
    trustProxy: config.TRUST_PROXY,
    bodyLimit: config.BODY_LIMIT,
    publicRoutes: (router) => {
      transactionRoute(router, { apiKeys, transactions, failures });
      openApiRoute(router, transactionsOpenApi(config.API_URL));
    },
    adminRoutes: (router) => transactionsAdminRoutes(router, { apiKeys, keyStore, transactions }),
  });
  return { ...apps, stop: async () => watcher?.stop() };
}
