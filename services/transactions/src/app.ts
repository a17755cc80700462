import {
  createServiceAppsFrom,
  credentialFailureLimiter,
  serviceAuditLog,
  type BuiltService,
  type ServiceDeps,
  WorkerLoop,
} from '@attest/common';
import { transactionsAdminApi, transactionsApi } from './api-documents';
import { apiKeysAdminRoutes } from './api-keys';
import { ChainMetrics, startChainWatcher } from './chain';
import { checkoutLinks, checkoutPageRoute } from './checkout-page';
import type { TransactionsConfig } from './config';
import { cachedApiKeyStore } from './kernel/api-keys/api-key-cache';
import { ApiKeyService } from './kernel/api-keys/api-key-service';
import { apiKeyStore } from './kernel/api-keys/api-key-store';
import {
  HttpPriceSource,
  paymentPolicyAdminRoutes,
  paymentPolicyRoute,
  PaymentPolicyService,
  PaymentRequestService,
  paymentRequestRoute,
  paymentRequestsAdminRoutes,
  paymentRequestsRoute,
} from './payment-requests';
import {
  recordTransactionRoute,
  TransactionService,
  transactionRoute,
  transactionsAdminRoutes,
  transactionsListRoute,
  transactionStore,
} from './transactions';
import {
  eventsAdminRoute,
  eventsRoute,
  startDeliveryWorker,
  webhookActionsRoute,
  webhookAdminRoutes,
  webhookDeliveriesRoute,
  WebhookMetrics,
  WebhookService,
  webhookStore,
  webhooksRoute,
  writeEvent,
} from './webhooks';

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
  const audit = serviceAuditLog(deps);
  const apiKeys = new ApiKeyService(keyStore, config.apiKeySecret, logger, audit);
  // the payment requests and the transactions write their events to the webhook outbox, each in its change's transaction
  const paymentRequests = new PaymentRequestService(
    storage.db,
    new HttpPriceSource(config.PRICES_URL, { maxAgeMs: config.PAYMENT_PRICE_MAX_AGE_SECONDS * 1000 }),
    storage.bus,
    { audit, outbox: writeEvent, links: checkoutLinks(config.API_URL, config.CHAIN_TOKENS, config.CHAIN_IDS) },
  );
  const paymentPolicies = new PaymentPolicyService(storage.db, audit);
  const transactions = new TransactionService(storage.db, storage.bus, {
    audit,
    settlement: paymentRequests,
    outbox: writeEvent,
  });
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
    ? await startChainWatcher(config, storage.db, transactions, chainMetrics, logger)
    : undefined;
  if (chain) deps.readiness.checks.push(chain.readiness);
  const auth = { apiKeys, failures };
  const tokens = config.CHAIN_TOKENS;
  const bodyLimit = config.BODY_LIMIT;
  const apps = createServiceAppsFrom(deps, {
    service: 'transactions',
    audit,
    publicUrl: config.API_URL,
    publicApi: transactionsApi(config.API_URL),
    adminApi: transactionsAdminApi(),
    // the order of the routes is the order of the operations in /openapi.json
    publicRoutes: (router) => {
      transactionRoute(router, { ...auth, transactions });
      recordTransactionRoute(router, { ...auth, transactions, tokens, bodyLimit, paymentRequests });
      paymentRequestsRoute(router, { ...auth, paymentRequests, tokens, bodyLimit });
      paymentRequestRoute(router, { ...auth, paymentRequests });
      paymentPolicyRoute(router, { ...auth, paymentPolicies, bodyLimit });
      checkoutPageRoute(router, { paymentRequests, policies: paymentPolicies, bus: storage.bus });
      transactionsListRoute(router, { ...auth, store: transactionStore(storage.db) });
      webhooksRoute(router, { ...auth, webhooks, audit, bodyLimit, wake: delivery.wake });
      webhookActionsRoute(router, { ...auth, webhooks, audit, bodyLimit, wake: delivery.wake });
      webhookDeliveriesRoute(router, { ...auth, webhooks, wake: delivery.wake });
      eventsRoute(router, { ...auth, webhooks });
    },
    adminRoutes: (router) => {
      apiKeysAdminRoutes(router, { apiKeys, keyStore });
      transactionsAdminRoutes(router, { transactions });
      paymentPolicyAdminRoutes(router, { paymentPolicies });
      webhookAdminRoutes(router, { webhooks, audit, wake: delivery.wake });
      paymentRequestsAdminRoutes(router, { paymentRequests });
      eventsAdminRoute(router, { webhooks });
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
