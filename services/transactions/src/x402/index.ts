/**
 * x402 (issue 43): this service as a self-hosted x402 facilitator. GET /x402/supported, POST /x402/verify,
 * POST /x402/settle with an app's API key; the exact scheme (EIP-3009) on the configured chain; a relayer that
 * submits transferWithAuthorization; one settlement per authorization; a settled payment recorded as the app's
 * transaction. Needs: the kernel, the transactions feature, and a receiving-address check the composition root
 * hands in. viem and @x402 are loaded with the facilitator (startX402), only when a chain is configured.
 */
export { x402Routes, type X402RouteDeps } from './x402-routes';
export { x402AdminRoutes, type X402AdminDeps } from './x402-admin-routes';
export type { X402Config, X402Deps, X402Facilitator } from './facilitator';
export type { ReceivingAddressCheck } from './verify';
export { relayerKey } from './relayer-key';

/** Builds the facilitator (see facilitator.ts), loading viem and @x402 with it. */
export const buildX402Facilitator: (typeof import('./facilitator'))['buildX402Facilitator'] = async (...args) =>
  (await import('./facilitator')).buildX402Facilitator(...args);
