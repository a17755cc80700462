import {
  AuditLog,
  createServiceApps,
  credentialFailureLimiter,
  type BuiltService,
  type ServiceDeps,
} from '@attest/common';
import { transactionsAdminRoutes } from './admin/admin-routes';
import { transactionsAdminApi } from './admin/admin-document';
import { webhookAdminRoutes } from './admin/webhook-admin-routes';
import type { TransactionsConfig } from './config';
import { ApiKeyService } from './domain/api-key-service';
import { TransactionService } from './domain/transactions';
import { WebhookService } from './domain/webhook-service';
import { transactionsApi } from './routes/openapi-document';
import { recordTransactionRoute } from './routes/record-transaction-route';
import { transactionRoute } from './routes/transaction-route';
import { cachedApiKeyStore } from './store/api-key-cache';
import { apiKeyStore } from './store/api-key-store';
import { webhookStore } from './store/webhook-store';
import { startDeliveryWorker } from './webhooks/start-worker';
import { WebhookMetrics } from './webhooks/webhook-metrics';

/**
 * Lookups are served from memory and Postgres; Redis carries failed-authentication counters and
 * invalidation messages. So the public API can serve while Postgres answers, with or without Redis.
 */
export const transactionsReady = (ok: Record<string, boolean>) => ok.database;

/** Composition root: stores → domain → routes, the admin API, the webhook delivery worker, and the chain watcher when configured. */
export async function buildApp(deps: ServiceDeps<TransactionsConfig>): Promise<BuiltService> {
  const { config, storage, logger } = deps;
  const keyStore = cachedApiKeyStore(apiKeyStore(storage.db), storage.bus, {
    ttlMs: config.API_KEY_CACHE_SECONDS * 1000,
  });
  const audit = new AuditLog(storage.db, logger, { retentionDays: config.AUDIT_RETENTION_DAYS });
  const apiKeys = new ApiKeyService(keyStore, config.apiKeySecret, logger, audit);
  const transactions = new TransactionService(storage.db, storage.bus, { audit });
  const failures = credentialFailureLimiter(storage.cache, config);
  deps.readiness.rule = transactionsReady;
  const webhooks = new WebhookService(webhookStore(storage.db), config.keyEncryptionKey, config.webhookTargets);
  const webhookMetrics = new WebhookMetrics();
  const delivery = startDeliveryWorker(config, storage, webhookMetrics, logger);
  // viem is loaded with the watcher, only when a chain is configured (it costs about 12 MB of memory)
  const watcher = config.CHAIN_RPC_URL
    ? await (await import('./chain/start-watcher')).startChainWatcher(config, storage.db, transactions, logger)
    : undefined;
  const apps = createServiceApps({
    service: 'transactions',
    logger,
    readiness: deps.readiness,
    adminToken: deps.adminToken,
    adminTokens: config.ADMIN_TOKENS,
    audit: { log: audit, db: storage.db },
    trustProxy: config.TRUST_PROXY,
    publicUrl: config.API_URL,
    bodyLimit: config.BODY_LIMIT,
    publicApi: transactionsApi(config.API_URL),
    adminApi: transactionsAdminApi(),
    publicRoutes: (router) => {
      transactionRoute(router, { apiKeys, transactions, failures });
      recordTransactionRoute(router, {
        apiKeys,
        transactions,
        failures,
        tokens: config.CHAIN_TOKENS,
        bodyLimit: config.BODY_LIMIT,
      });
    },
    adminRoutes: (router) => {
      transactionsAdminRoutes(router, { apiKeys, keyStore, transactions });
      webhookAdminRoutes(router, { webhooks, audit });
    },
    metrics: (registry) => webhookMetrics.register(registry),
  });
  audit.start();
  return {
    ...apps,
    stop: async () => {
      await Promise.all([watcher?.stop(), delivery.stop()]);
      await audit.stop();
    },
  };
}
