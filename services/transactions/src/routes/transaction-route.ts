import type { NextFunction, Request, Response, Router } from 'express';
import {
  AppError,
  countFailure,
  credentialKeysOf,
  endpoint,
  errors,
  queryParam,
  refuseWhileBlocked,
  sendJson,
  type FailureLimiter,
} from '@attest/common';
import type { ApiKeyService, VerifiedKey } from '../domain/api-key-service';
import { parseApiKey } from '../domain/api-keys';
import { toSpec, TRANSACTION_ID, TYPE_ALIASES, type TransactionService } from '../domain/transactions';

const BEARER = 'Bearer realm="attest-api"';
const unknownKey = () =>
  errors.unauthenticated('The API key is unknown or revoked.', `${BEARER}, error="invalid_token"`);

export interface TransactionRouteDeps {
  apiKeys: ApiKeyService;
  transactions: TransactionService;
  /** Failed API-key checks, per key id (never the secret part) and per client address. */
  failures: FailureLimiter;
}

const BEARER_KEY = /^Bearer\s+(\S+)\s*$/i;

/** The API key id a request presents, read without checking its secret. */
const presentedKeyId = (req: Request) => parseApiKey(BEARER_KEY.exec(req.get('authorization') ?? '')?.[1] ?? '')?.keyId;

/**
 * GET /api/v2/client/transaction/{transaction_id}?app_id=…&type=pay|sendTransaction (SPEC 4.7), with the
 * app's API key: failure limits → API key → lookup. A wrong or unknown key counts against the limits.
 */
export function transactionRoute(router: Router, deps: TransactionRouteDeps): void {
  const authenticate = async (req: Request, res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    if (!header) return next(errors.unauthenticated('Provide your API key as Authorization: Bearer <API_KEY>.', BEARER));
    const match = BEARER_KEY.exec(header);
    if (!match) return next(errors.unauthenticated('The Authorization header must be Bearer <API_KEY>.', BEARER));
    const key = await deps.apiKeys.verify(match[1]);
    if (!key) return next(await countFailure(deps.failures, res, unknownKey()));
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
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, toSpec(transaction));
  };

  const refuseBlocked = refuseWhileBlocked(deps.failures, credentialKeysOf(presentedKeyId));
  endpoint(router, '/api/v2/client/transaction/:transaction_id', { GET: [refuseBlocked, authenticate, lookup] });
}
