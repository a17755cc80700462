import { PAYMENT_REQUEST_STATUSES } from '../kernel/events';
import { REFUND_SCHEMA } from './refund.openapi';

/** A payment request as GET /api/v2/client/payment-requests/{id} answers it (and the admin API, and its events' data). */

const PAYMENT = {
  type: 'object',
  required: ['transaction_id', 'status', 'token_amount', 'amount_received', 'confirmations', 'late'],
  properties: {
    transaction_id: { type: 'string' },
    reference: { type: 'string' },
    transaction_hash: { type: ['string', 'null'] },
    from: { type: 'string' },
    status: { enum: ['pending', 'mined', 'failed'] },
    reason: { type: ['string', 'null'], description: 'Why it failed (reverted, wrong_recipient, already_claimed, …)' },
    token_amount: { type: 'string', description: 'What the wallet recorded' },
    amount_received: { type: ['string', 'null'], description: 'What the chain moved, once mined (6 decimals)' },
    block_number: { type: ['string', 'null'] },
    block_time: { type: ['string', 'null'], format: 'date-time' },
    confirmations: {
      type: ['integer', 'null'],
      description: 'Blocks since its block, the head as the watcher last saw it',
    },
    late: { type: 'boolean', description: 'Its block came after the request expired' },
    recorded_at: { type: 'string', format: 'date-time' },
  },
};

const RATE = {
  type: 'object',
  description: 'Fiat per token: amount × 10^-decimals',
  properties: { amount: { type: 'string' }, decimals: { type: 'integer' } },
};

export const PAYMENT_REQUEST_SCHEMA = {
  type: 'object',
  required: [
    'id',
    'reference',
    'status',
    'reason',
    'token',
    'accepted_tokens',
    'amount_due',
    'amount_paid',
    'expires_at',
    'payments',
  ],
  properties: {
    id: { type: 'string', pattern: '^pr_[0-9a-f]{32}$' },
    reference: { type: 'string' },
    status: { enum: [...PAYMENT_REQUEST_STATUSES] },
    reason: {
      type: ['string', 'null'],
      description:
        'in_block (detected), reorganised (pending again: the block of a detected payment was reorganised away), underpaid, underpaid_within_tolerance (paid), overpaid (paid_over), paid_after_expiry (paid_late), paid_after_cancel (paid_late), partially_refunded, refunded, expired, or a failed payment’s reason (failed)',
    },
    reason_detail: { type: ['string', 'null'], description: 'A sentence with the amounts' },
    chain: { type: 'string' },
    token: {
      type: ['string', 'null'],
      description:
        'The token it is settled in (amount_due, amount_paid and the amounts are in it): the only accepted token, or the ' +
        'token of its payments; null while several are accepted and no payment is recorded (or all of them failed)',
    },
    accepted_tokens: {
      type: 'array',
      description: 'The tokens it accepts, in the order given, each with its amount due (fixed at creation)',
      items: {
        type: 'object',
        required: ['token', 'amount_due', 'price'],
        properties: {
          token: { type: 'string' },
          amount_due: { type: 'string', pattern: '^\\d+$', description: 'Integer: the amount × 10^6' },
          price: {
            type: ['object', 'null'],
            description: 'A fiat-priced request: the token price this amount was converted at',
            properties: {
              rate: RATE,
              observed_at: { type: 'string', format: 'date-time' },
              source: { type: 'string' },
            },
          },
        },
      },
    },
    to: { type: 'string' },
    amount_due: {
      type: ['string', 'null'],
      pattern: '^\\d+$',
      description: 'Integer: the amount × 10^6, in token; null with token',
    },
    amount_paid: { type: 'string', pattern: '^\\d+$', description: 'What the mined payments received, × 10^6' },
    amount_remaining: { type: ['string', 'null'], pattern: '^\\d+$', description: 'null with token' },
    amount_over: { type: 'string', pattern: '^\\d+$' },
    amount_refunded: {
      type: 'string',
      pattern: '^\\d+$',
      description:
        'What the refunds you recorded add up to, × 10^6 (partially_refunded below amount_paid, refunded at it)',
    },
    price: {
      type: ['object', 'null'],
      description:
        'A fiat-priced request: the price, and the price of token it was converted at (null while token is null; each ' +
        'accepted token’s is in accepted_tokens)',
      properties: {
        amount: { type: 'string' },
        currency: { type: 'string' },
        rate: { ...RATE, type: ['object', 'null'] },
        observed_at: { type: ['string', 'null'], format: 'date-time' },
        source: { type: ['string', 'null'] },
      },
    },
    amount_policy: {
      type: 'object',
      properties: {
        underpayment_tolerance_percent: { type: 'string' },
        flag_overpayment: { type: 'boolean' },
      },
    },
    metadata: { type: ['object', 'null'] },
    expires_at: { type: 'string', format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    payments: { type: 'array', items: PAYMENT },
    refunds: { type: 'array', items: REFUND_SCHEMA, description: 'The refunds you recorded, oldest first' },
  },
};
