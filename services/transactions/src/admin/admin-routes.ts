import type { Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  pageOf,
  documentAdminRoute,
  errorResponse,
  errors,
  jsonResponse,
  operatorActor,
  pageQuery,
  validate,
} from '@attest/common';
import type { ApiKeyService } from '../domain/api-key-service';
import { toSpec, TRANSACTION_ID, TYPE_ALIASES, type TransactionService } from '../domain/transactions';
import type { ApiKeyRecord, ApiKeyStore } from '../store/api-key-store';
import type { TransactionStatus } from '../store/transaction-store';
import { transactionsSchemas } from './admin-document';

/** An app id in a path, a query or a body. */
const APP_ID = Joi.string()
  .pattern(/^app_[0-9a-f]{32}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be app_ followed by 32 hexadecimal digits' });
const ADDRESS = Joi.string()
  .pattern(/^0x[0-9a-fA-F]{40}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be an address: 0x followed by 40 hexadecimal digits' });

/** The `{app_id}` of /apps/{app_id}/… paths (the webhook routes' too), so an error names app_id. */
export const appIdParams = Joi.object({ app_id: APP_ID.required() });

export const createApiKeySchema = Joi.object({ name: Joi.string().trim().max(200).allow(null) });

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
  cursor: Joi.string()
    .lowercase()
    .pattern(TRANSACTION_ID)
    .messages({ 'string.pattern.base': 'cursor must be the next_cursor of a previous page' }),
});

const publicKey = (k: ApiKeyRecord) => ({
  key_id: k.id,
  app_id: k.appId,
  name: k.name,
  created_at: k.createdAt.toISOString(),
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
  revoked_at: k.revokedAt?.toISOString() ?? null,
});

const transactionParams = Joi.object({
  id: Joi.string().description('The transaction_id: 0x and 64 hexadecimal digits (any case)'),
});
const noTransaction = adminNotFoundResponse('no transaction with this id (attribute transaction_id)');
const keyTags = ['api keys'];
const appTags = ['apps'];

const appStatus = (appId: string, disabledAt: Date | null) => ({
  app_id: appId,
  disabled: disabledAt !== null,
  disabled_at: disabledAt?.toISOString() ?? null,
});
const tags = ['transactions'];

export function transactionsAdminRoutes(
  router: Router,
  deps: { apiKeys: ApiKeyService; keyStore: ApiKeyStore; transactions: TransactionService },
): void {
  documentAdminRoute(router, 'POST', '/apps/:app_id/api-keys', {
    summary: 'Create an API key for an app',
    description: 'The key is in this answer only; it is stored as a keyed hash.',
    tags: keyTags,
    params: appIdParams,
    body: { contentType: 'application/json', schema: createApiKeySchema, required: false },
    responses: {
      201: jsonResponse('The key, shown once, and its record', transactionsSchemas.newApiKey),
      400: adminValidationResponse('app_id (app_ and 32 hexadecimal digits) or name'),
    },
  });
  router.post('/apps/:app_id/api-keys', async (req, res) => {
    const { app_id: appId } = validate(appIdParams, { app_id: req.params.app_id });
    const { name } = validate(createApiKeySchema, req.body);
    const { apiKey, record } = await deps.apiKeys.create(appId, name ?? null, operatorActor(req, res));
    res.status(201).json({ api_key: apiKey, ...publicKey(record) });
  });

  documentAdminRoute(router, 'GET', '/apps/:app_id/api-keys', {
    summary: 'An app’s API keys, revoked ones included (never the keys themselves)',
    tags: keyTags,
    params: appIdParams,
    responses: {
      200: jsonResponse('The keys', { type: 'array', items: transactionsSchemas.apiKey }),
      400: adminValidationResponse('app_id (app_ and 32 hexadecimal digits)'),
    },
  });
  router.get('/apps/:app_id/api-keys', async (req, res) => {
    const { app_id: appId } = validate(appIdParams, { app_id: req.params.app_id });
    res.json((await deps.keyStore.listForApp(appId)).map(publicKey));
  });

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    documentAdminRoute(router, 'POST', `/apps/:app_id/${action}`, {
      summary: disabled
        ? 'Disable an app here: its API keys get 401 and its webhook endpoints stop, on every replica at once'
        : 'Enable a disabled app again: its API keys work again and its waiting webhook deliveries go out',
      description:
        'Idempotent. `pnpm manage app ' +
        action +
        '` calls this after the identity service’s own POST /admin/apps/{app_id}/' +
        action +
        ' (which stops its tokens).',
      tags: appTags,
      params: appIdParams,
      responses: {
        200: jsonResponse('The app’s state here', transactionsSchemas.appStatus),
        400: adminValidationResponse('app_id (app_ and 32 hexadecimal digits)'),
      },
    });
    router.post(`/apps/:app_id/${action}`, async (req, res) => {
      const { app_id: appId } = validate(appIdParams, { app_id: req.params.app_id });
      const disabledAt = await deps.apiKeys.setAppDisabled(appId, disabled, operatorActor(req, res));
      res.json(appStatus(appId, disabledAt));
    });
  }

  documentAdminRoute(router, 'GET', '/apps/:app_id', {
    summary: 'Whether an app is disabled here (its API keys and webhooks)',
    tags: appTags,
    params: appIdParams,
    responses: {
      200: jsonResponse('The app’s state here', transactionsSchemas.appStatus),
      400: adminValidationResponse('app_id (app_ and 32 hexadecimal digits)'),
    },
  });
  router.get('/apps/:app_id', async (req, res) => {
    const { app_id: appId } = validate(appIdParams, { app_id: req.params.app_id });
    res.json(appStatus(appId, await deps.keyStore.appDisabledAt(appId)));
  });

  documentAdminRoute(router, 'POST', '/api-keys/:key_id/revoke', {
    summary: 'Revoke an API key; it stops working at once on every replica',
    tags: keyTags,
    responses: {
      200: jsonResponse('The key, with revoked_at', transactionsSchemas.apiKey),
      404: adminNotFoundResponse('no API key with this key_id (attribute key_id)'),
    },
  });
  router.post('/api-keys/:key_id/revoke', async (req, res) => {
    const record = await deps.apiKeys.revoke(req.params.key_id, operatorActor(req, res));
    if (!record) throw errors.notFound('No API key with this key_id.', 'key_id');
    res.json(publicKey(record));
  });

  documentAdminRoute(router, 'POST', '/transactions', {
    summary: 'Record a transaction',
    description: 'Recorded by the operator (source admin), with the status given (pending by default).',
    tags,
    body: { contentType: 'application/json', schema: recordSchema },
    responses: {
      201: jsonResponse('The transaction', transactionsSchemas.transaction),
      400: adminValidationResponse('app_id, type, reference, from, to, chain, token, token_amount, …'),
      409: errorResponse(
        'reference_taken: the app already recorded a transaction with this reference; transaction_already_claimed ' +
          '(attribute transaction_hash): another recorded payment holds this transaction on this chain',
      ),
    },
  });
  router.post('/transactions', async (req, res) => {
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
  });

  const transactionId = (raw: string) => {
    const id = raw.toLowerCase();
    if (!TRANSACTION_ID.test(id))
      throw errors.invalidParameter('transaction_id', 'transaction_id must be 0x followed by 64 hexadecimal digits.');
    return id;
  };

  documentAdminRoute(router, 'GET', '/transactions', {
    summary: 'An app’s transactions, newest first (paged); by status or reference',
    tags,
    query: listQuery,
    responses: {
      200: jsonResponse('A page of transactions', pageOf('transactions', transactionsSchemas.listedTransaction)),
      400: adminValidationResponse('app_id, status, reference, limit or cursor'),
    },
  });
  router.get('/transactions', async (req, res) => {
    const q = validate(listQuery, req.query);
    const rows = await deps.transactions.list({
      appId: q.app_id,
      status: q.status as TransactionStatus | undefined,
      reference: q.reference as string | undefined,
      after: q.cursor,
      limit: q.limit + 1,
    });
    const page = rows.slice(0, q.limit);
    res.json({
      transactions: page.map((t) => ({
        transaction_id: t.id,
        type: t.type,
        ...toSpec(t),
        updated_at: t.updatedAt.toISOString(),
      })),
      next_cursor: rows.length > q.limit ? page[page.length - 1].id : null,
    });
  });

  documentAdminRoute(router, 'GET', '/transactions/:id', {
    summary: 'One transaction, with its status history',
    tags,
    params: transactionParams,
    responses: {
      200: jsonResponse('The transaction and who changed its status when', transactionsSchemas.transactionWithHistory),
      400: adminValidationResponse('transaction_id'),
      404: noTransaction,
    },
  });
  router.get('/transactions/:id', async (req, res) => {
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
  });

  documentAdminRoute(router, 'POST', '/transactions/:id/status', {
    summary: 'Move a pending transaction to mined or failed',
    description: 'The status it already has changes nothing; any other change is 409 invalid_transition.',
    tags,
    params: transactionParams,
    body: { contentType: 'application/json', schema: statusSchema },
    responses: {
      200: jsonResponse('The transaction', transactionsSchemas.transaction),
      400: adminValidationResponse('transaction_id or status'),
      404: noTransaction,
      409: errorResponse(
        'invalid_transition: the transaction is already mined or failed (attribute status); transaction_already_claimed ' +
          '(attribute transaction_hash): to mined, but another payment claimed its transaction',
      ),
    },
  });
  router.post('/transactions/:id/status', async (req, res) => {
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
  });
}
