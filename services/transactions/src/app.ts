import {
  createServiceAppsFrom,
  credentialFailureLimiter,
  serviceAuditLog,
  type BuiltService,
  type ServiceDeps,
  WorkerLoop,
} from '@attest/common';
import type { Registry } from 'prom-client';
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
  RefundService,
  refundsRoute,
} from './payment-requests';
import {
  ReceivingAddressService,
  receivingAddressesAdminRoutes,
  receivingAddressesRoute,
  signatureVerifier,
} from './receiving-addresses';
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
import { buildX402Facilitator, x402AdminRoutes, x402Routes, type X402Facilitator } from './x402';

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
  // the addresses each app receives payments at; a contract proves with EIP-1271 on the watched chain's RPC
  const receivingAddresses = new ReceivingAddressService(
    storage.db,
    signatureVerifier(config.chainRpcUrls.length > 0 ? { [config.CHAIN_NAME]: config.chainRpcUrls[0] } : {}),
    { audit, chains: Object.keys(config.CHAIN_TOKENS), bus: storage.bus },
  );
  const apiKeys = new ApiKeyService(keyStore, config.apiKeySecret, logger, audit);
  const links = checkoutLinks(config.API_URL, config.CHAIN_TOKENS, config.CHAIN_IDS);
  // the payment requests and the transactions write their events to the webhook outbox, each in its change's transaction
  const paymentRequests = new PaymentRequestService(
    storage.db,
    new HttpPriceSource(config.PRICES_URL, { maxAgeMs: config.PAYMENT_PRICE_MAX_AGE_SECONDS * 1000 }),
    storage.bus,
    { audit, outbox: writeEvent, links },
  );
  const paymentPolicies = new PaymentPolicyService(storage.db, audit, storage.bus);
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
  // refunds are verified on chain when recorded, through the watcher's RPCs, finality and quorum
  const refunds = new RefundService(storage.db, {
    chains: chain ? [chain.finalTransactions] : [],
    outbox: writeEvent,
    links,
    audit,
    changed: (id) => paymentRequests.changed(id),
  });
  const x402 = x402Facilitator(deps, { transactions, paymentRequests, receiving: receivingAddresses });
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
      recordTransactionRoute(router, { ...auth, transactions, tokens, bodyLimit, paymentRequests, receivingAddresses });
      paymentRequestsRoute(router, { ...auth, paymentRequests, tokens, bodyLimit, receivingAddresses });
      paymentRequestRoute(router, { ...auth, paymentRequests });
      refundsRoute(router, { ...auth, refunds, paymentRequests, bodyLimit });
      paymentPolicyRoute(router, { ...auth, paymentPolicies, bodyLimit });
      checkoutPageRoute(router, { paymentRequests, policies: paymentPolicies, bus: storage.bus });
      transactionsListRoute(router, { ...auth, store: transactionStore(storage.db) });
      webhooksRoute(router, { ...auth, webhooks, audit, bodyLimit, wake: delivery.wake });
      webhookActionsRoute(router, { ...auth, webhooks, audit, bodyLimit, wake: delivery.wake });
      webhookDeliveriesRoute(router, { ...auth, webhooks, wake: delivery.wake });
      eventsRoute(router, { ...auth, webhooks });
      receivingAddressesRoute(router, { ...auth, receivingAddresses, bodyLimit });
      x402Routes(router, { ...auth, facilitator: x402.get, bodyLimit });
    },
    adminRoutes: (router) => {
      apiKeysAdminRoutes(router, { apiKeys, keyStore });
      transactionsAdminRoutes(router, { transactions });
      paymentPolicyAdminRoutes(router, { paymentPolicies });
      webhookAdminRoutes(router, { webhooks, audit, wake: delivery.wake });
      paymentRequestsAdminRoutes(router, { paymentRequests });
      eventsAdminRoute(router, { webhooks });
      receivingAddressesAdminRoutes(router, { receivingAddresses });
      x402AdminRoutes(router, { keyEncryptionKey: config.keyEncryptionKey, audit });
    },
    metrics: (registry) => {
      webhookMetrics.register(registry);
      if (chain) chainMetrics.register(registry);
      x402.registerMetrics(registry);
    },
  });
  audit.start();
  return {
    ...apps,
    stop: async () => {
      await Promise.all([chain?.watcher.stop(), delivery.stop(), expirySweep.stop(), x402.stop()]);
      await audit.stop();
    },
  };
}

/**
 * The x402 facilitator when a chain is configured (CHAIN_RPC_URL): built on the first x402 request (or at start),
 * again after a failure (the RPC may be away); the relayer's balance is read each minute for /metrics.
 */
function x402Facilitator(
  deps: ServiceDeps<TransactionsConfig>,
  parts: Omit<Parameters<typeof buildX402Facilitator>[1], 'db' | 'logger'>,
) {
  const { config, storage, logger } = deps;
  let built: Promise<X402Facilitator> | undefined;
  let ready: X402Facilitator | undefined;
  let registry: Registry | undefined;
  const get = async (): Promise<X402Facilitator | null> => {
    if (config.chainRpcUrls.length === 0) return null;
    built ??= buildX402Facilitator(config, { ...parts, db: storage.db, logger }).then(
      (f) => {
        ready = f;
        if (registry) f.metrics?.register(registry);
        return f;
      },
      (err: unknown) => {
        built = undefined;
        throw err;
      },
    );
    return built;
  };
  const balance = new WorkerLoop({
    name: 'x402 relayer balance',
    pass: async () => {
      const f = await get();
      if (f?.relayer) f.metrics?.observeBalance(await f.relayer.balance());
      return false;
    },
    intervalMs: 60000,
    logger,
  });
  if (config.chainRpcUrls.length > 0 && config.X402_RELAYER_KEY) balance.start();
  return {
    get,
    registerMetrics(r: Registry) {
      registry = r;
      ready?.metrics?.register(r);
    },
    stop: () => balance.stop(),
  };
}
