import type { Transaction } from '../kernel/transaction';

/** SPEC 2.5, snake_case; token_amount an integer string, timestamp ISO 8601. */
export function toSpec(t: Transaction) {
  return {
    reference: t.reference,
    transaction_hash: t.transactionHash,
    transaction_status: t.status,
    from: t.from,
    chain: t.chain,
    timestamp: t.createdAt.toISOString(),
    token_amount: t.tokenAmount,
    token: t.token,
    to: t.to,
    app_id: t.appId,
  };
}
