import type { PaymentRequestStatus } from '../kernel/events';
import type { TransactionStatus } from '../kernel/transaction';

/** The payment requests' domain types: a request, the tokens it accepts, its amount policy, its payments. */

/** An app's amount policy: how payment requests that were not paid exactly are settled. */
export interface AmountPolicy {
  /** An underpayment within this percent of amount_due still makes the request paid (0 to 50, 2 decimals). */
  underpaymentTolerancePercent: string;
  /** An overpayment is accepted either way; true marks the request paid_over instead of paid. */
  flagOverpayment: boolean;
}

export const DEFAULT_AMOUNT_POLICY: AmountPolicy = { underpaymentTolerancePercent: '0', flagOverpayment: true };

/** An app's payment policy: its amount policy and the expiry of a request created without expires_in. */
export interface PaymentPolicy extends AmountPolicy {
  defaultExpiresInSeconds: number;
  /** The name the customer's page shows (null: the page shows none). */
  displayName: string | null;
  /** The https origins a request's return_url may point to. */
  returnOrigins: string[];
}

export const DEFAULT_PAYMENT_POLICY: PaymentPolicy = {
  ...DEFAULT_AMOUNT_POLICY,
  defaultExpiresInSeconds: 900,
  displayName: null,
  returnOrigins: [],
};

/** The token price a fiat-priced request was converted at, for one accepted token. */
export interface TokenPrice {
  /** Fiat per token: amount × 10^-decimals. */
  amount: string;
  decimals: number;
  observedAt: Date;
  source: string;
}

/** A token a request accepts, with the amount due in it (6 decimals, as token_amount). */
export interface AcceptedToken {
  token: string;
  amountDue: string;
  /** The price it was converted at (a fiat-priced request), or null (priced in the token). */
  price: TokenPrice | null;
}

export interface PaymentRequest {
  id: string;
  appId: string;
  reference: string;
  status: PaymentRequestStatus;
  statusReason: string | null;
  statusDetail: string | null;
  chain: string;
  /**
   * The token it is settled in: the only accepted one, or the token its payments are in; null while
   * several are accepted and no payment that has not failed is recorded.
   */
  token: string | null;
  to: string;
  /** In `token`, 6 decimals as token_amount; null with token. */
  amountDue: string | null;
  amountPaid: string;
  /** What the app's recorded refunds add up to (6 decimals); 0 when none. */
  amountRefunded: string;
  /** The fiat price it was asked in, or null (priced in a token). */
  fiat: { amount: string; currency: string } | null;
  /** The tokens it accepts, in the order the app listed them (at least one). */
  accepted: AcceptedToken[];
  expiresInSeconds: number;
  expiresAt: Date;
  /**
   * When the request was first reported `expired` (API, webhook, page), or null: from then on any payment
   * for it is late (the expiry is decided once).
   */
  expiredAt: Date | null;
  /** When the app canceled it, or null: a payment completing it afterwards is flagged (paid_late, paid_after_cancel). */
  canceledAt: Date | null;
  /** Where the customer's page returns once paid (https, one of the app's return origins), or null. */
  returnUrl: string | null;
  /** The metadata JSON as the app sent it (re-serialised), or null. */
  metadata: string | null;
  policy: AmountPolicy;
  createdAt: Date;
  updatedAt: Date;
}

/** expiresInSeconds null: the app's default expiry (its payment policy). */
export type NewPaymentRequest = { expiresInSeconds: number | null } & Omit<
  PaymentRequest,
  | 'expiresInSeconds'
  | 'status'
  | 'statusReason'
  | 'statusDetail'
  | 'token'
  | 'amountDue'
  | 'amountPaid'
  | 'amountRefunded'
  | 'expiresAt'
  | 'expiredAt'
  | 'canceledAt'
  | 'policy'
  | 'createdAt'
  | 'updatedAt'
>;

/** A recorded payment (transactions row) naming a request. */
export interface RequestPayment {
  transactionId: string;
  reference: string;
  transactionHash: string | null;
  from: string;
  status: TransactionStatus;
  statusReason: string | null;
  tokenAmount: string;
  /** What the chain moved, once mined (6 decimals). */
  amountReceived: string | null;
  blockNumber: string | null;
  blockTime: Date | null;
  createdAt: Date;
}

/** A refund the app recorded: a final transfer from one of its receiving addresses to the address that paid. */
export interface Refund {
  id: string;
  paymentRequestId: string;
  appId: string;
  chain: string;
  transactionHash: string;
  logIndex: number | null;
  token: string;
  from: string;
  to: string;
  /** 6 decimals, as amount_paid. */
  amount: string;
  blockNumber: string;
  blockTime: Date;
  createdAt: Date;
}
