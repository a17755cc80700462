import type { Refund } from './payment-request-types';

/** A refund as the app API answers it (its list, the request's `refunds`, the refund events' `data.refund`). */
export const refundView = (f: Refund) => ({
  id: f.id,
  payment_request_id: f.paymentRequestId,
  chain: f.chain,
  transaction_hash: f.transactionHash,
  log_index: f.logIndex,
  token: f.token,
  from: f.from,
  to: f.to,
  amount: f.amount,
  block_number: f.blockNumber,
  block_time: f.blockTime.toISOString(),
  created_at: f.createdAt.toISOString(),
});
export type RefundView = ReturnType<typeof refundView>;
