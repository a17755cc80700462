import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import { endpoint, errorResponse, errors, jsonResponse, queryParam, sendJson, validate } from '@attest/common';
import { apiKeyAuthentication, invalidApp, verifiedKey, type ApiKeyAuthDeps } from '../kernel/api-keys/api-key-auth';
import { apiKeyResponses } from '../kernel/openapi';
import type { TransactionType } from '../kernel/transaction';
import { TYPE_ALIASES } from './transaction-rules';
import type { TransactionService } from './transaction-service';
import { toSpec } from './transaction-spec';

export interface TransactionRouteDeps extends ApiKeyAuthDeps {
  transactions: TransactionService;
}

/** Why a transaction failed (the chain watcher's reason), beside the SPEC 2.5 body, which stays as it is. */
export const STATUS_REASON_HEADER = 'Transaction-Status-Reason';

/** The lookup's query (each parameter once, blank as missing: queryParam runs first). */
export const lookupQuerySchema = Joi.object({
  app_id: Joi.string().required().description('Your app'),
  type: Joi.string()
    .valid(...Object.keys(TYPE_ALIASES))
    .required()
    .description('pay or sendTransaction (payment and transaction are accepted too)')
    .messages({ 'any.only': 'type must be pay or sendTransaction.' }),
});

/** A transaction id as the lookup's path takes it: any case. */
const ANY_CASE_ID = /^0x[0-9a-fA-F]{64}$/;

/** The lookup's path: the transaction id, any case. */
export const lookupParamsSchema = Joi.object({
  transaction_id: Joi.string()
    .pattern(ANY_CASE_ID)
    .required()
    .messages({ 'string.pattern.base': 'transaction_id must be 0x followed by 64 hexadecimal digits.' }),
});

/**
 * The lookup's parameters. A well-formed request (the usual one) is read directly, by the same rules as
 * the schemas above; anything else goes through the schemas, which name what is wrong. (Two joi
 * validations were 4.5 % of a cached lookup's CPU.)
 */
function lookupOf(req: Request): { appId: string; type: TransactionType; id: string } {
  const appId = queryParam(req.query, 'app_id');
  const typeName = queryParam(req.query, 'type');
  const rawId = req.params.transaction_id;
  if (
    appId === undefined ||
    typeName === undefined ||
    !Object.hasOwn(TYPE_ALIASES, typeName) ||
    typeof rawId !== 'string' ||
    !ANY_CASE_ID.test(rawId)
  ) {
    const query = validate(lookupQuerySchema, { app_id: appId, type: typeName });
    const params = validate(lookupParamsSchema, { transaction_id: rawId });
    return { appId: query.app_id, type: TYPE_ALIASES[query.type], id: params.transaction_id.toLowerCase() };
  }
  return { appId, type: TYPE_ALIASES[typeName], id: rawId.toLowerCase() };
}

/**
 * GET /api/v2/client/transaction/{transaction_id}?app_id=…&type=pay|sendTransaction (SPEC 4.7), with the
 * app's API key: failure limits → API key → lookup. A wrong or unknown key counts against the limits.
 */
export function transactionRoute(router: Router, deps: TransactionRouteDeps): void {
  const lookup = async (req: Request, res: Response) => {
    const { appId, type, id } = lookupOf(req);
    if (verifiedKey(res).appId !== appId) throw invalidApp();
    const transaction = await deps.transactions.get(id);
    if (!transaction || transaction.appId !== appId || transaction.type !== type)
      throw errors.notFound('No transaction with this id for this app and type.', 'transaction_id');
    if (transaction.statusReason) res.setHeader(STATUS_REASON_HEADER, transaction.statusReason);
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, toSpec(transaction));
  };

  endpoint(
    router,
    '/api/v2/client/transaction/:transaction_id',
    { GET: [...apiKeyAuthentication(deps), lookup] },
    {
      GET: {
        summary: 'Current status of a payment or transaction of your app',
        tags: ['transactions'],
        security: [{ apiKey: [] }],
        params: lookupParamsSchema,
        query: lookupQuerySchema,
        responses: {
          200: jsonResponse(
            'The transaction',
            { $ref: '#/components/schemas/Transaction' },
            {
              [STATUS_REASON_HEADER]: {
                description:
                  'Only on a failed transaction the chain watcher failed: reverted, wrong_token, wrong_recipient, wrong_sender, wrong_amount, unknown_token, dropped or already_claimed (another payment claimed the same transaction first)',
                schema: { type: 'string' },
              },
            },
          ),
          400: errorResponse(
            'required (app_id, type) or invalid_parameter (type, transaction_id, also malformed percent-encoding, or a parameter given twice)',
          ),
          ...apiKeyResponses,
          404: errorResponse('not_found: no such transaction for this app and type'),
        },
      },
    },
    { fast: true },
  );
}
