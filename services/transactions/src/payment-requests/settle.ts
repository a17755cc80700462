import type { PaymentRequestStatus } from '../kernel/events';
import type { Reason } from '../kernel/transaction';
import type { PaymentRequest, RequestPayment } from './payment-request-types';

/** The amounts in 6 decimals as a sentence: 1.5 of 2 USDCE. */
const units = (amount: bigint) => {
  const whole = amount / 1000000n;
  const fraction = (amount % 1000000n).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
};

/**
 * A payment is late when its block came after expires_at, or when the request had already been reported
 * expired (expired_at: the expiry is decided once) or canceled, and the payment did not fail.
 */
export const isLate = (r: Pick<PaymentRequest, 'expiresAt' | 'expiredAt' | 'canceledAt'>, p: RequestPayment): boolean =>
  (p.blockTime !== null && p.blockTime > r.expiresAt) ||
  ((r.expiredAt !== null || r.canceledAt !== null) && p.status !== 'failed');

/**
 * The state a request is in given its recorded payments and its amount policy: the sum of what the mined
 * ones received against amount_due. Reaching amount_due less the tolerance is paid (paid_over above it
 * when overpayments are flagged; paid_late when the request was reported expired before, or a counted
 * payment's block came after the expiry); less is
 * underpaid. With nothing received: failed (the failed payment's reason) when a payment failed, else the
 * state stays (pending, detected or expired).
 */
export function settle(r: PaymentRequest, payments: RequestPayment[]): Settled {
  return refundedState(r, settlePayments(r, payments));
}

type Settled = { status: PaymentRequestStatus; reason: Reason | null; amountPaid: bigint };

/**
 * A request the app refunded (amount_refunded above 0) stays refunded when its payments are settled again
 * (a payment recorded earlier becoming final): partially_refunded below what was paid, refunded at it.
 */
export function refundedState(r: Pick<PaymentRequest, 'amountRefunded' | 'token'>, settled: Settled): Settled {
  const refunded = BigInt(r.amountRefunded);
  if (refunded === 0n || settled.amountPaid === 0n) return settled;
  const full = refunded >= settled.amountPaid;
  return {
    status: full ? 'refunded' : 'partially_refunded',
    reason: {
      code: full ? 'refunded' : 'partially_refunded',
      detail: `Refunded ${units(refunded)} of the ${units(settled.amountPaid)} ${r.token ?? ''} received.`,
    },
    amountPaid: settled.amountPaid,
  };
}

function settlePayments(r: PaymentRequest, payments: RequestPayment[]): Settled {
  const mined = payments.filter((p) => p.status === 'mined');
  const paid = mined.reduce((sum, p) => sum + BigInt(p.amountReceived ?? p.tokenAmount), 0n);
  if (paid === 0n || r.amountDue === null) {
    const failed = payments.filter((p) => p.status === 'failed');
    if (failed.length > 0 && failed.length === payments.length && r.canceledAt === null) {
      const last = failed[failed.length - 1];
      return {
        status: 'failed',
        reason: {
          code: last.statusReason ?? 'failed',
          detail: `The payment ${last.transactionHash ?? last.transactionId} failed (${last.statusReason ?? 'failed'}); nothing was received.`,
        },
        amountPaid: 0n,
      };
    }
    return {
      status: r.status,
      reason: r.statusReason ? { code: r.statusReason, detail: r.statusDetail ?? '' } : null,
      amountPaid: 0n,
    };
  }
  const due = BigInt(r.amountDue);
  // canceled: what arrives afterwards is recorded and flagged like a late payment, never paid
  if (r.canceledAt !== null)
    return {
      status: 'paid_late',
      reason: {
        code: 'paid_after_cancel',
        detail: `Received ${units(paid)} of ${units(due)} ${r.token ?? ''} after the request was canceled at ${r.canceledAt.toISOString()}; refund it or honour the order.`,
      },
      amountPaid: paid,
    };
  const toleranceBasis = BigInt(Math.round(Number(r.policy.underpaymentTolerancePercent) * 100));
  const enough = (due * (10000n - toleranceBasis) + 9999n) / 10000n;
  const token = r.token ?? '';
  if (paid < enough)
    return {
      status: 'underpaid',
      reason: {
        code: 'underpaid',
        detail: `Received ${units(paid)} of ${units(due)} ${token} (${units(due - paid)} short); the underpayment tolerance of ${r.policy.underpaymentTolerancePercent} % needs at least ${units(enough)}.`,
      },
      amountPaid: paid,
    };
  // expiry is decided once: a request already reported expired is paid late, whatever its block's whole-second time
  if (r.expiredAt !== null)
    return {
      status: 'paid_late',
      reason: {
        code: 'paid_after_expiry',
        detail: `Received ${units(paid)} of ${units(due)} ${token}; the request was reported expired at ${r.expiredAt.toISOString()} (expires_at ${r.expiresAt.toISOString()}) before the payment was final.`,
      },
      amountPaid: paid,
    };
  const late = mined.find((p) => isLate(r, p));
  if (late)
    return {
      status: 'paid_late',
      reason: {
        code: 'paid_after_expiry',
        detail: `Received ${units(paid)} of ${units(due)} ${token}; a payment's block (${late.blockTime!.toISOString()}) came after the request expired at ${r.expiresAt.toISOString()}.`,
      },
      amountPaid: paid,
    };
  if (paid > due)
    return r.policy.flagOverpayment
      ? {
          status: 'paid_over',
          reason: {
            code: 'overpaid',
            detail: `Received ${units(paid)} of ${units(due)} ${token} (${units(paid - due)} over).`,
          },
          amountPaid: paid,
        }
      : { status: 'paid', reason: null, amountPaid: paid };
  if (paid < due)
    return {
      status: 'paid',
      reason: {
        code: 'underpaid_within_tolerance',
        detail: `Received ${units(paid)} of ${units(due)} ${token} (${units(due - paid)} short), within the underpayment tolerance of ${r.policy.underpaymentTolerancePercent} %.`,
      },
      amountPaid: paid,
    };
  return { status: 'paid', reason: null, amountPaid: paid };
}
