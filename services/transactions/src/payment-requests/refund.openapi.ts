/** A refund as the app API answers it (its list, the request's `refunds`, the refund events' data.refund). */
export const REFUND_SCHEMA = {
  type: 'object',
  required: ['id', 'payment_request_id', 'transaction_hash', 'token', 'from', 'to', 'amount', 'block_number'],
  properties: {
    id: { type: 'string', pattern: '^rf_[0-9a-f]{32}$' },
    payment_request_id: { type: 'string' },
    chain: { type: 'string' },
    transaction_hash: { type: 'string', description: 'The transaction that refunded (claimed once)' },
    log_index: { type: ['integer', 'null'], description: 'Its Transfer log; null for a native value transfer' },
    token: { type: 'string', description: 'The token the request was paid in' },
    from: { type: 'string', description: 'One of your receiving addresses' },
    to: { type: 'string', description: 'The address that paid the request' },
    amount: { type: 'string', pattern: '^\\d+$', description: 'What the chain moved, × 10^6 as amount_paid' },
    block_number: { type: 'string', description: 'Its final block' },
    block_time: { type: 'string', format: 'date-time' },
    created_at: { type: 'string', format: 'date-time', description: 'When it was recorded' },
  },
};
