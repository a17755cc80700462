import { DATE_TIME, type JsonSchema } from '@attest/common';
import { nullableString, object, ref } from '../kernel/openapi';

/** The public document's Transaction: the lookup's answer (SPEC 2.5). */
export const transactionPublicComponents: Record<string, JsonSchema> = {
  Transaction: {
    type: 'object',
    properties: {
      reference: { type: 'string' },
      transaction_hash: { type: ['string', 'null'] },
      transaction_status: { enum: ['pending', 'mined', 'failed'] },
      from: { type: 'string' },
      chain: { type: 'string' },
      timestamp: { type: 'string', format: 'date-time' },
      token_amount: { type: 'string', pattern: '^\\d+$', description: 'Integer: the amount × 10^6' },
      token: { type: 'string' },
      to: { type: 'string' },
      app_id: { type: 'string' },
    },
  },
};

const TRANSACTION_STATUS: JsonSchema = { enum: ['pending', 'mined', 'failed'] };

/** A transaction as the public lookup answers it (SPEC names), with its id and type. */
const TRANSACTION_PROPERTIES: Record<string, JsonSchema> = {
  transaction_id: { type: 'string', pattern: '^0x[0-9a-f]{64}$' },
  type: { enum: ['pay', 'sendTransaction'] },
  reference: { type: 'string' },
  transaction_hash: nullableString,
  transaction_status: TRANSACTION_STATUS,
  from: { type: 'string' },
  chain: { type: 'string' },
  timestamp: { ...DATE_TIME, description: 'When it was recorded' },
  token_amount: { type: 'string', pattern: '^\\d+$', description: 'Integer: the amount × 10^6' },
  token: { type: 'string' },
  to: { type: 'string' },
  app_id: { type: 'string' },
};

/** The admin document's transaction schemas. */
export const transactionAdminComponents: Record<string, JsonSchema> = {
  Transaction: object(TRANSACTION_PROPERTIES),
  ListedTransaction: object({ ...TRANSACTION_PROPERTIES, updated_at: DATE_TIME }),
  TransactionWithHistory: object({
    ...TRANSACTION_PROPERTIES,
    status_reason: { ...nullableString, description: 'Why it has its status, when known' },
    history: {
      type: 'array',
      items: object({
        from_status: { enum: ['pending', 'mined', 'failed', null], description: 'null: when it was recorded' },
        to_status: TRANSACTION_STATUS,
        source: { type: 'string', description: 'admin, api, or chain:<network>' },
        reason: nullableString,
        reason_detail: nullableString,
        changed_at: DATE_TIME,
      }),
    },
  }),
};

export const transactionSchemas = {
  transaction: ref('Transaction'),
  listedTransaction: ref('ListedTransaction'),
  transactionWithHistory: ref('TransactionWithHistory'),
};
