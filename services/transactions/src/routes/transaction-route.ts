import type { Request, Response, Router } from 'express';
import { endpoint, errors, queryParam, sendJson } from '@attest/common';
import { toSpec, TRANSACTION_ID, TYPE_ALIASES, type TransactionService } from '../domain/transactions';
import { apiKeyAuthentication, invalidApp, verifiedKey, type ApiKeyAuthDeps } from './api-key-auth';

export interface TransactionRouteDeps extends ApiKeyAuthDeps {
  transactions: TransactionService;
}

/** Why a transaction failed (the chain watcher's reason), beside the SPEC 2.5 body, which stays as it is. */
export const STATUS_REASON_HEADER = 'Transaction-Status-Reason';

/**
 * GET /api/v2/client/transaction/{transaction_id}?app_id=…&type=pay|sendTransaction (SPEC 4.7), with the
 * app's API key: failure limits → API key → lookup. A wrong or unknown key counts against the limits.
 */
export function transactionRoute(router: Router, deps: TransactionRouteDeps): void {
  const lookup = async (req: Request, res: Response) => {
    const appId = queryParam(req.query, 'app_id');
    const typeParam = queryParam(req.query, 'type');
    if (!appId) throw errors.required('app_id');
    if (!typeParam) throw errors.required('type');
    const type = TYPE_ALIASES[typeParam];
    if (!type) throw errors.invalidParameter('type', 'type must be pay or sendTransaction.');
    const id = String(req.params.transaction_id).toLowerCase();
    if (!TRANSACTION_ID.test(id))
      throw errors.invalidParameter('transaction_id', 'transaction_id must be 0x followed by 64 hexadecimal digits.');
    if (verifiedKey(res).appId !== appId) throw invalidApp();
    const transaction = await deps.transactions.get(id);
    if (!transaction || transaction.appId !== appId || transaction.type !== type)
      throw errors.notFound('No transaction with this id for this app and type.', 'transaction_id');
    if (transaction.statusReason) res.setHeader(STATUS_REASON_HEADER, transaction.statusReason);
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, toSpec(transaction));
  };

  endpoint(router, '/api/v2/client/transaction/:transaction_id', { GET: [...apiKeyAuthentication(deps), lookup] });
}
