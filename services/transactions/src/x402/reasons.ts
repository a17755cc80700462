/**
 * The invalid reasons verify and settle answer. @x402/evm's exact scheme names its reasons with these strings but
 * does not export them (they are module-private constants of its facilitator), so they are spelled here, byte for
 * byte as it sends them; the x402 specification's general reasons likewise. Attest's own reasons (an address the
 * app did not register, its limits, the relayer's gas) follow the same style.
 */
export const REASONS = {
  // @x402/evm 2.27 exact scheme (EIP-3009)
  scheme: 'invalid_exact_evm_scheme',
  networkMismatch: 'invalid_exact_evm_network_mismatch',
  missingDomain: 'invalid_exact_evm_missing_eip712_domain',
  recipientMismatch: 'invalid_exact_evm_recipient_mismatch',
  signature: 'invalid_exact_evm_signature',
  validBefore: 'invalid_exact_evm_payload_authorization_valid_before',
  validAfter: 'invalid_exact_evm_payload_authorization_valid_after',
  value: 'invalid_exact_evm_authorization_value',
  transactionFailed: 'invalid_exact_evm_transaction_failed',
  simulationFailed: 'invalid_exact_evm_transaction_simulation_failed',
  tokenName: 'invalid_exact_evm_token_name_mismatch',
  tokenVersion: 'invalid_exact_evm_token_version_mismatch',
  nonceUsed: 'invalid_exact_evm_nonce_already_used',
  insufficientBalance: 'invalid_exact_evm_insufficient_balance',
  unsupportedPayload: 'unsupported_payload_type',
  // the x402 specification's
  version: 'invalid_x402_version',
  unsupportedScheme: 'unsupported_scheme',
  network: 'invalid_network',
  payload: 'invalid_payload',
  requirements: 'invalid_payment_requirements',
  unexpectedSettle: 'unexpected_settle_error',
  // Attest's
  notRegistered: 'recipient_not_registered',
  amountOverLimit: 'amount_over_limit',
  amountUnderLimit: 'amount_under_limit',
  rateLimited: 'settlement_rate_limited',
  relayerOutOfGas: 'relayer_insufficient_gas',
  inProgress: 'settlement_in_progress',
  otherApp: 'settled_by_another_app',
  noRelayer: 'settlement_not_configured',
  paymentIdUsed: 'payment_identifier_already_used',
  // the attest-human extension's (human-proof.ts): the seller asks for the verified human behind the agent
  humanNotConfigured: 'human_proof_not_configured',
  humanMissing: 'human_proof_missing',
  humanInvalid: 'human_proof_invalid',
  humanExpired: 'human_proof_expired',
  humanAudience: 'human_proof_audience_mismatch',
  humanNotDelegated: 'human_proof_not_delegated',
  humanAcr: 'human_proof_insufficient_acr',
} as const;

export type Reason = (typeof REASONS)[keyof typeof REASONS];
