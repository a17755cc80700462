import { randomBytes } from 'node:crypto';
import { errors } from '@attest/common';
import type { NewPaymentRequest, PaymentRequest } from './payment-request-types';
import { tokenAmountFor, type PriceSource } from './price-quote';

export const PAYMENT_REQUEST_ID = /^pr_[0-9a-f]{32}$/;
export const newPaymentRequestId = () => `pr_${randomBytes(16).toString('hex')}`;

export type CreateRequest = Omit<NewPaymentRequest, 'id' | 'fiat' | 'accepted'> & {
  /** A price in a token (then `tokens` has that one token) or in a fiat currency. */
  price: { tokenAmount: bigint } | { amount: string; currency: string };
  /** The accepted tokens in the app's order, each with its decimals (CHAIN_TOKENS). */
  tokens: { token: string; decimals: number }[];
  /** The body's name for the tokens (token or accepted_tokens): a conflict names the field the app sent. */
  tokensField: 'token' | 'accepted_tokens';
};

/** What an app asked for, in the body's terms: two creations of one reference must ask the same. */
interface Ask {
  chain: string;
  /** The accepted tokens, sorted (the order they are listed in does not make another request). */
  tokens: string;
  to: string;
  amount: string | null;
  currency: string | null;
  tokenAmount: string | null;
  expiresInSeconds: number;
  metadata: string | null;
  returnUrl: string | null;
}

const tokensKey = (tokens: string[]) => [...tokens].sort().join(',');

const askOf = (r: PaymentRequest): Ask => ({
  chain: r.chain,
  tokens: tokensKey(r.accepted.map((a) => a.token)),
  to: r.to,
  amount: r.fiat?.amount ?? null,
  currency: r.fiat?.currency ?? null,
  tokenAmount: r.fiat ? null : (r.accepted[0]?.amountDue ?? null),
  expiresInSeconds: r.expiresInSeconds,
  metadata: r.metadata,
  returnUrl: r.returnUrl,
});

/** The fields that make two creations of one reference the same request (the body's names). */
const SAME_REQUEST: [string, (a: Ask) => string | number | null][] = [
  ['chain', (a) => a.chain],
  ['accepted_tokens', (a) => a.tokens],
  ['to', (a) => a.to.toLowerCase()],
  ['amount', (a) => a.amount],
  ['currency', (a) => a.currency],
  ['token_amount', (a) => a.tokenAmount],
  ['expires_in', (a) => a.expiresInSeconds],
  ['metadata', (a) => a.metadata],
  ['return_url', (a) => a.returnUrl],
];

/** What `input` asks for, in the body's terms. */
function askOfInput(input: CreateRequest): Omit<Ask, 'expiresInSeconds'> & { expiresInSeconds: number | null } {
  const fiat = 'currency' in input.price ? input.price : null;
  return {
    chain: input.chain,
    tokens: tokensKey(input.tokens.map((t) => t.token)),
    to: input.to,
    amount: fiat?.amount ?? null,
    currency: fiat?.currency ?? null,
    tokenAmount: 'tokenAmount' in input.price ? input.price.tokenAmount.toString() : null,
    expiresInSeconds: input.expiresInSeconds,
    metadata: input.metadata,
    returnUrl: input.returnUrl,
  };
}

/** 400 naming return_url unless it is https on one of the app's return origins (its payment settings). */
export function checkReturnUrl(returnUrl: string, origins: readonly string[]): void {
  const origin = new URL(returnUrl).origin;
  if (!origins.includes(origin))
    throw errors.invalidParameter(
      'return_url',
      origins.length === 0
        ? 'return_url needs your return origins first: set return_origins with PUT /api/v2/client/payment-policy.'
        : `return_url must be on one of your return origins (${origins.join(', ')}); ${origin} is not one.`,
    );
}

/** 409 reference_taken naming the first field in which `input` asks for another request than `existing`. */
export function sameCreation(existing: PaymentRequest, input: CreateRequest): void {
  const stored = askOf(existing);
  // no expires_in: the app's default, whatever it was when the request was created
  const ask = { ...askOfInput(input), expiresInSeconds: input.expiresInSeconds ?? stored.expiresInSeconds };
  let field = SAME_REQUEST.find(([, value]) => value(stored) !== value(ask))?.[0];
  if (field === 'accepted_tokens') field = input.tokensField;
  if (field)
    throw errors.conflict(
      'reference_taken',
      `This app already created a payment request with reference ${JSON.stringify(input.reference)} and a different ${field}; use a new reference for a new order.`,
      field,
    );
}

/**
 * The request to store: each accepted token's amount due, from its current price when priced in a fiat
 * currency (any price that is not fresh refuses the request), else the token amount asked.
 */
export async function newRequest(input: CreateRequest, prices: PriceSource): Promise<NewPaymentRequest> {
  const fiat = 'currency' in input.price ? input.price : null;
  const tokenPriced = 'tokenAmount' in input.price ? input.price.tokenAmount.toString() : null;
  const base = {
    id: newPaymentRequestId(),
    appId: input.appId,
    reference: input.reference,
    chain: input.chain,
    to: input.to,
    expiresInSeconds: input.expiresInSeconds,
    metadata: input.metadata,
    returnUrl: input.returnUrl,
  };
  if (fiat) {
    // each accepted token's amount from its current price; any price that is not fresh refuses the request
    const quotes = await Promise.all(input.tokens.map((t) => prices.quote(t.token, fiat.currency)));
    return {
      ...base,
      fiat: { amount: fiat.amount, currency: fiat.currency },
      accepted: input.tokens.map((t, i) => ({
        token: t.token,
        amountDue: tokenAmountFor(fiat.amount, quotes[i], t.decimals).toString(),
        price: {
          amount: quotes[i].amount,
          decimals: quotes[i].decimals,
          observedAt: quotes[i].observedAt,
          source: quotes[i].source,
        },
      })),
    };
  }
  return {
    ...base,
    fiat: null,
    accepted: input.tokens.map((t) => ({ token: t.token, amountDue: tokenPriced!, price: null })),
  };
}
