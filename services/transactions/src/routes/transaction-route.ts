import type { NextFunction, Request, Response, Router } from 'express';
import { AppError, endpoint, errors, queryParam } from '@attest/common';
import type { ApiKeyService, VerifiedKey } from '../domain/api-key-service';
import { toSpec, TRANSACTION_ID, TYPE_ALIASES, type TransactionService } from '../domain/transactions';

const BEARER = 'Bearer realm="attest-api"';

export interface TransactionRouteDeps {
  apiKeys: ApiKeyService;
  transactions: TransactionService;
}

/** GET /api/v2/client/transaction/{transaction_id}?app_id=…&type=pay|sendTransaction (SPEC 4.7), with the app's API key. */
export function transactionRoute(router: Router, deps: TransactionRouteDeps): void {
  const authenticate = async (req: Request, res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    if (!header) return next(errors.unauthenticated('Provide your API key as Authorization: Bearer <API_KEY>.', BEARER));
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return next(errors.unauthenticated('The Authorization header must be Bearer <API_KEY>.', BEARER));
    const key = await deps.apiKeys.verify(match[1]);
    if (!key) return next(errors.unauthenticated('The API key is unknown or revoked.', `${BEARER}, error="invalid_token"`));
    res.locals.key = key;
    next();
  };

  const lookup = async (req: Request, res: Response) => {
    const appId = queryParam(req.query, 'app_id');
    const typeParam = queryParam(req.query, 'type');
    if (!appId) throw errors.required('app_id');
    if (!typeParam) throw errors.required('type');
    const type = TYPE_ALIASES[typeParam];
    if (!type) throw errors.invalidParameter('type', 'type must be pay or sendTransaction.');
    const id = String(req.params.transaction_id).toLowerCase();
    if (!TRANSACTION_ID.test(id)) throw errors.invalidParameter('transaction_id', 'transaction_id must be 0x followed by 64 hexadecimal digits.');
    const key = res.locals.key as VerifiedKey;
    if (key.appId !== appId) throw new AppError('invalid_app', 403, 'This API key does not belong to app_id.', 'app_id');
    const transaction = await deps.transactions.get(id);
    if (!transaction || transaction.appId !== appId || transaction.type !== type) throw errors.notFound('No transaction with this id for this app and type.', 'transaction_id');
    res.set('Cache-Control', 'no-store').json(toSpec(transaction));
  };

  endpoint(router, '/api/v2/client/transaction/:transaction_id', { GET: [authenticate, lookup] });
}
