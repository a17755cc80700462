import type { Router } from 'express';
import Joi from 'joi';
import {
  adminRoute,
  adminNotFoundResponse,
  adminValidationResponse,
  pageOf,
  errorResponse,
  errors,
  jsonResponse,
  listPage,
  operatorActor,
  pageCursor,
  pageQuery,
  validate,
} from '@attest/common';
import { APP_ID } from '../kernel/admin-params';
import type { TransactionStatus } from '../kernel/transaction';
import { TRANSACTION_ID, TYPE_ALIASES } from './transaction-rules';
import type { TransactionService } from './transaction-service';
import { toSpec } from './transaction-spec';
import { transactionSchemas } from './transactions.openapi';

const ADDRESS = Joi.string()
  .pattern(/^0x[0-9a-fA-F]{40}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be an address: 0x followed by 40 hexadecimal digits' });

export const recordSchema = Joi.object({
  app_id: APP_ID.required(),
  type: Joi.string()
    .valid(...Object.keys(TYPE_ALIASES))
    .required(),
  reference: Joi.string().trim().min(1).max(200).required(),
  from: ADDRESS.required(),
  to: ADDRESS.required(),
  chain: Joi.string()
    .pattern(/^[a-z0-9-]{1,50}$/)
    .required()
    .messages({ 'string.pattern.base': 'chain must be a lowercase network name' }),
  token: Joi.string()
    .uppercase()
    .pattern(/^[A-Z0-9]{2,12}$/)
    .required()
    .messages({ 'string.pattern.base': 'token must be a token code such as USDCE' }),
  token_amount: Joi.string()
    .pattern(/^\d{1,78}$/)
    .required()
    .messages({
      'string.pattern.base': 'token_amount must be an integer (the amount times 10^6), with no sign or decimal point',
    }),
  transaction_hash: Joi.string()
    .lowercase()
    .pattern(/^0x[0-9a-f]{64}$/)
    .allow(null)
    .messages({ 'string.pattern.base': 'transaction_hash must be 0x followed by 64 hexadecimal digits' }),
  status: Joi.string().valid('pending', 'mined', 'failed').default('pending'),
});

export const statusSchema = Joi.object({ status: Joi.string().valid('pending', 'mined', 'failed').required() });

export const listQuery = Joi.object({
  ...pageQuery,
  app_id: APP_ID.required(),
  status: Joi.string().valid('pending', 'mined', 'failed'),
  reference: Joi.string().max(200).description('Only the transaction with this reference'),
  cursor: pageCursor(TRANSACTION_ID, Joi.string().lowercase()),
});

const transactionParams = Joi.object({
  id: Joi.string().description('The transaction_id: 0x and 64 hexadecimal digits (any case)'),
});
const noTransaction = adminNotFoundResponse('no transaction with this id (attribute transaction_id)');
const tags = ['transactions'];

export interface TransactionsAdminDeps {
  transactions: Pick<TransactionService, 'record' | 'list' | 'get' | 'history' | 'transition'>;
}

/** Transactions recorded, listed, read with their history and moved by hand by an operator. */
export function transactionsAdminRoutes(router: Router, deps: TransactionsAdminDeps): void {
  adminRoute(
    router,
    'POST',
    '/transactions',
    {
      summary: 'Record a transaction',
      description: 'Recorded by the operator (source admin), with the status given (pending by default).',
      tags,
      body: { contentType: 'application/json', schema: recordSchema },
      responses: {
        201: jsonResponse('The transaction', transactionSchemas.transaction),
        400: adminValidationResponse('app_id, type, reference, from, to, chain, token, token_amount, …'),
        409: errorResponse(
          'reference_taken: the app already recorded a transaction with this reference; transaction_already_claimed ' +
            '(attribute transaction_hash): another recorded payment holds this transaction on this chain',
        ),
      },
    },
    async (req, res) => {
      const body = validate(recordSchema, req.body);
      const t = await deps.transactions.record(
        {
          appId: body.app_id,
          type: TYPE_ALIASES[body.type],
          reference: body.reference,
          transactionHash: body.transaction_hash ?? null,
          status: body.status as TransactionStatus,
          from: body.from,
          to: body.to,
          chain: body.chain,
          token: body.token,
          tokenAmount: BigInt(body.token_amount).toString(),
        },
        'admin',
        operatorActor(req, res),
      );
      res.status(201).json({ transaction_id: t.id, type: t.type, ...toSpec(t) });
    },
  );

  const transactionId = (raw: string) => {
    const id = raw.toLowerCase();
    if (!TRANSACTION_ID.test(id))
      throw errors.invalidParameter('transaction_id', 'transaction_id must be 0x followed by 64 hexadecimal digits.');
    return id;
  };

  adminRoute(
    router,
    'GET',
    '/transactions',
    {
      summary: 'An app’s transactions, newest first (paged); by status or reference',
      tags,
      query: listQuery,
      responses: {
        200: jsonResponse('A page of transactions', pageOf('transactions', transactionSchemas.listedTransaction)),
        400: adminValidationResponse('app_id, status, reference, limit or cursor'),
      },
    },
    async (req, res) => {
      const q = validate(listQuery, req.query);
      const rows = await deps.transactions.list({
        appId: q.app_id,
        status: q.status as TransactionStatus | undefined,
        reference: q.reference as string | undefined,
        after: q.cursor,
        limit: q.limit + 1,
      });
      res.json(
        listPage(
          'transactions',
          rows,
          q.limit,
          (t) => ({ transaction_id: t.id, type: t.type, ...toSpec(t), updated_at: t.updatedAt.toISOString() }),
          (t) => t.id,
        ),
      );
    },
  );

  adminRoute(
    router,
    'GET',
    '/transactions/:id',
    {
      summary: 'One transaction, with its status history',
      tags,
      params: transactionParams,
      responses: {
        200: jsonResponse('The transaction and who changed its status when', transactionSchemas.transactionWithHistory),
        400: adminValidationResponse('transaction_id'),
        404: noTransaction,
      },
    },
    async (req, res) => {
      const id = transactionId(req.params.id);
      const t = await deps.transactions.get(id);
      if (!t) throw errors.notFound('No transaction with this id.', 'transaction_id');
      const history = await deps.transactions.history(id);
      res.json({
        transaction_id: t.id,
        type: t.type,
        ...toSpec(t),
        status_reason: t.statusReason,
        history: history.map((h) => ({
          from_status: h.fromStatus,
          to_status: h.toStatus,
          source: h.source,
          reason: h.reason?.code ?? null,
          reason_detail: h.reason?.detail ?? null,
          changed_at: h.changedAt.toISOString(),
        })),
      });
    },
  );

  adminRoute(
    router,
    'POST',
    '/transactions/:id/status',
    {
      summary: 'Move a pending transaction to mined or failed',
      description: 'The status it already has changes nothing; any other change is 409 invalid_transition.',
      tags,
      params: transactionParams,
      body: { contentType: 'application/json', schema: statusSchema },
      responses: {
        200: jsonResponse('The transaction', transactionSchemas.transaction),
        400: adminValidationResponse('transaction_id or status'),
        404: noTransaction,
        409: errorResponse(
          'invalid_transition: the transaction is already mined or failed (attribute status); transaction_already_claimed ' +
            '(attribute transaction_hash): to mined, but another payment claimed its transaction',
        ),
      },
    },
    async (req, res) => {
      const id = transactionId(req.params.id);
      const { status } = validate(statusSchema, req.body);
      const { transaction } = await deps.transactions.transition(
        id,
        status as TransactionStatus,
        'admin',
        null,
        operatorActor(req, res),
      );
      res.json({ transaction_id: transaction.id, type: transaction.type, ...toSpec(transaction) });
    },
  );
}
