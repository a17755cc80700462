/**
 * Transactions: payments and transactions apps record (POST /api/v2/client/transaction), look up
 * (GET /api/v2/client/transaction/{id}) and list; their one-way state machine, lookup cache and store;
 * and the admin API's transactions. Needs: API keys (kernel), the webhook outbox (webhooks), and a
 * PaymentSettlement (kernel/settlement.ts) the composition root hands in.
 */
export { recordTransactionRoute, type RecordTransactionRouteDeps } from './record-transaction-route';
export { transactionRoute, type TransactionRouteDeps } from './transaction-route';
export { transactionsListRoute, type TransactionsListRouteDeps } from './transactions-list-route';
export { transactionsAdminRoutes, type TransactionsAdminDeps } from './transactions-admin-routes';
export { transactionAdminComponents, transactionPublicComponents } from './transactions.openapi';
export { ALREADY_CLAIMED } from './transaction-rules';
export {
  TransactionService,
  type ScannedOutcome,
  type TransactionCacheOptions,
  type TransferClaim,
  type TransitionResult,
} from './transaction-service';
export { transactionStore, type LeasedTransaction, type TransactionStore } from './transaction-store';
