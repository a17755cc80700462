/**
 * Payment requests: an amount of a token to an address by an expiry, priced in a token or a fiat currency
 * (the prices service), settled from the payments recorded for them (PaymentSettlement, handed to the
 * transactions feature by the composition root), expired by a sweep; the app API, the admin API's reads
 * and an app's payment policy (admin API and app API). Needs: the kernel and the webhook outbox (webhooks).
 */
export { paymentRequestRoute, type PaymentRequestRouteDeps } from './payment-request-route';
export { paymentRequestsRoute, type PaymentRequestsRouteDeps } from './payment-requests-route';
export { paymentRequestsAdminRoutes, type PaymentRequestsAdminDeps } from './payment-requests-admin-routes';
export { paymentPolicyAdminRoutes, type PaymentPolicyAdminDeps } from './payment-policy-admin-routes';
export { paymentPolicyRoute, type PaymentPolicyRouteDeps } from './payment-policy-route';
export { PaymentRequestService, type PaymentRequestCacheOptions } from './payment-request-service';
export { PaymentPolicyService } from './payment-policy-service';
export type { PaymentRequestView } from './payment-request-view';
export { HttpPriceSource, type PriceQuote, type PriceSource } from './price-quote';
export { refundsRoute, type RefundsRouteDeps } from './refunds-route';
export { RefundService } from './refund-service';
