import { isLate } from './settle';
import type { PaymentRequest, Refund, RequestPayment } from './payment-request-types';
import { refundView } from './refund-view';

/** A block's confirmations at `head` (the block itself is 1); null when either is unknown or the head is behind it. */
const confirmations = (blockNumber: string | null, head: bigint | null): number | null =>
  blockNumber !== null && head !== null && head >= BigInt(blockNumber) ? Number(head - BigInt(blockNumber) + 1n) : null;

/** The view with each payment's confirmations at `head` (the view itself is kept as it is). */
export function atHead(view: PaymentRequestView, head: bigint | null): PaymentRequestView {
  return {
    ...view,
    payments: view.payments.map((p) => ({ ...p, confirmations: confirmations(p.block_number, head) })),
  };
}

/**
 * What a request carries to be paid (the composition root's, from the checkout page feature): its page
 * (payment_url) and each accepted token's EIP-681 URI (payment_uri).
 */
export type RequestLinks = (r: PaymentRequest) => { payment_url: string; payment_uri: Record<string, string> };

/** The answer of GET /api/v2/client/payment-requests/{id}, and the `data` of its events; `refunds` oldest first. */
export function requestView(
  r: PaymentRequest,
  payments: RequestPayment[],
  head: bigint | null,
  links?: RequestLinks,
  refunds: Refund[] = [],
) {
  const due = r.amountDue === null ? null : BigInt(r.amountDue);
  const paid = BigInt(r.amountPaid);
  const settledPrice = r.accepted.find((a) => a.token === r.token)?.price ?? null;
  return {
    id: r.id,
    reference: r.reference,
    status: r.status,
    reason: r.statusReason,
    reason_detail: r.statusDetail,
    chain: r.chain,
    token: r.token,
    accepted_tokens: r.accepted.map((a) => ({
      token: a.token,
      amount_due: a.amountDue,
      price: a.price
        ? {
            rate: { amount: a.price.amount, decimals: a.price.decimals },
            observed_at: a.price.observedAt.toISOString(),
            source: a.price.source,
          }
        : null,
    })),
    to: r.to,
    amount_due: r.amountDue,
    amount_paid: r.amountPaid,
    amount_remaining: due === null ? null : (due > paid ? due - paid : 0n).toString(),
    amount_over: (due !== null && paid > due ? paid - due : 0n).toString(),
    amount_refunded: r.amountRefunded,
    price: r.fiat
      ? {
          amount: r.fiat.amount,
          currency: r.fiat.currency,
          rate: settledPrice ? { amount: settledPrice.amount, decimals: settledPrice.decimals } : null,
          observed_at: settledPrice?.observedAt.toISOString() ?? null,
          source: settledPrice?.source ?? null,
        }
      : null,
    amount_policy: {
      underpayment_tolerance_percent: r.policy.underpaymentTolerancePercent,
      flag_overpayment: r.policy.flagOverpayment,
    },
    metadata: r.metadata === null ? null : (JSON.parse(r.metadata) as unknown),
    return_url: r.returnUrl,
    ...(links ? links(r) : {}),
    expires_at: r.expiresAt.toISOString(),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    payments: payments.map((p) => ({
      transaction_id: p.transactionId,
      reference: p.reference,
      transaction_hash: p.transactionHash,
      from: p.from,
      status: p.status,
      reason: p.statusReason,
      token_amount: p.tokenAmount,
      amount_received: p.amountReceived,
      block_number: p.blockNumber,
      block_time: p.blockTime?.toISOString() ?? null,
      confirmations: confirmations(p.blockNumber, head),
      late: isLate(r, p),
      recorded_at: p.createdAt.toISOString(),
    })),
    refunds: refunds.map(refundView),
  };
}
export type PaymentRequestView = ReturnType<typeof requestView>;
