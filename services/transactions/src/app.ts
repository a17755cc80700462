import {
  AuditLog,
  createServiceApps,
  credentialFailureLimiter,
  type BuiltService,
  type ServiceDeps,
  WorkerLoop,
} from '@attest/common';
import { transactionsAdminRoutes } from './admin/admin-routes';
import { ChainMetrics } from './chain/chain-metrics';
import { transactionsAdminApi } from './admin/admin-document';
import { paymentAdminRoutes } from './admin/payment-admin-routes';
import { paymentPolicyAdminRoutes } from './admin/payment-policy-admin-routes';
import { webhookAdminRoutes } from './admin/webhook-admin-routes';
import type { TransactionsConfig } from './config';
import { ApiKeyService } from './domain/api-key-service';
import { PaymentRequestService } from './domain/payment-requests';
import { HttpPriceSource } from './domain/price-quote';
import { TransactionService } from './domain/transactions';
import { WebhookService } from './domain/webhook-service';
import { eventsRoute } from './routes/events-route';
import { transactionsApi } from './routes/openapi-document';
import { paymentRequestsRoute } from './routes/payment-requests-route';
import { recordTransactionRoute } from './routes/record-transaction-route';
import { transactionRoute } from './routes/transaction-route';
import { transactionsListRoute } from './routes/transactions-list-route';
import { webhooksRoute } from './routes/webhooks-route';
import { cachedApiKeyStore } from './store/api-key-cache';
import { apiKeyStore } from './store/api-key-store';
import { transactionStore } from './store/transaction-store';
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
  const paymentRequests = new PaymentRequestService(
    storage.db,
    new HttpPriceSource(config.PRICES_URL, { maxAgeMs: config.PAYMENT_PRICE_MAX_AGE_SECONDS * 1000 }),
    storage.bus,
    { audit },
  );
  const transactions = new TransactionService(storage.db, storage.bus, { audit, settlement: paymentRequests });
  // expires pending payment requests past their expiry (a read expires one too, before the sweep comes)
  const expirySweep = new WorkerLoop({
    name: 'payment request expiry',
    pass: () => paymentRequests.expireDue(),
    intervalMs: config.PAYMENT_REQUEST_SWEEP_INTERVAL_MS,
    logger,
  });
  expirySweep.start();
  const failures = credentialFailureLimiter(storage.cache, config);
  deps.readiness.rule = transactionsReady;
  const webhooks = new WebhookService(webhookStore(storage.db), config.keyEncryptionKey, config.webhookTargets);
  const webhookMetrics = new WebhookMetrics();
  const delivery = startDeliveryWorker(config, storage, webhookMetrics, logger, audit);
  const chainMetrics = new ChainMetrics();
  // viem is loaded with the watcher, only when a chain is configured (it costs about 12 MB of memory)
  const chain = config.CHAIN_RPC_URL
    ? await (
        await import('./chain/start-watcher')
      ).startChainWatcher(config, storage.db, transactions, chainMetrics, logger)
    : undefined;
  if (chain) deps.readiness.checks.push(chain.readiness);
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
        paymentRequests,
      });
      paymentRequestsRoute(router, {
        apiKeys,
        failures,
        paymentRequests,
        tokens: config.CHAIN_TOKENS,
        bodyLimit: config.BODY_LIMIT,
      });
      transactionsListRoute(router, { apiKeys, failures, store: transactionStore(storage.db) });
      webhooksRoute(router, { apiKeys, failures, webhooks, audit, bodyLimit: config.BODY_LIMIT, wake: delivery.wake });
      eventsRoute(router, { apiKeys, failures, webhooks });
    },
    adminRoutes: (router) => {
      transactionsAdminRoutes(router, { apiKeys, keyStore, transactions });
      paymentPolicyAdminRoutes(router, { paymentRequests });
      webhookAdminRoutes(router, { webhooks, audit, wake: delivery.wake });
      paymentAdminRoutes(router, { paymentRequests, webhooks });
    },
    metrics: (registry) => {
      webhookMetrics.register(registry);
      if (chain) chainMetrics.register(registry);
    },
  });
  audit.start();
  return {
    ...apps,
    stop: async () => {
      await Promise.all([chain?.watcher.stop(), delivery.stop(), expirySweep.stop()]);
      await audit.stop();
    },
  };
}
