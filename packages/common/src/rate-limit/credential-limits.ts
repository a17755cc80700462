import type { Request, RequestHandler, Response } from 'express';
import type { Cache } from '../cache';
import type { FailureLimitConfig } from '../config';
import type { AppError } from '../errors';
import { clientAddress } from './client-address';
import { FailureLimiter } from './failure-limiter';
import type { FailureCount, FailureKeys } from './failure-policy';
import { failureFields, tooManyFailures } from './rate-limit-fields';

/**
 * Failed credential checks (client secrets, API keys) are limited per id from one address (a guesser),
 * per id from everywhere (many guessers), and per address across ids (one guesser trying many ids).
 * Ids are public (a client id is in every sign-in URL, a key id in the key), so the per-id limit refuses
 * only the addresses that failed for that id themselves: nobody can lock a client or a key out for the
 * others by sending wrong secrets from elsewhere.
 */
export function credentialFailureLimiter(cache: Cache, config: FailureLimitConfig): FailureLimiter {
  const windowSeconds = config.AUTH_FAILURE_WINDOW_SECONDS;
  return new FailureLimiter(cache, 'credentials', [
    { name: 'per-id-and-address', limit: config.AUTH_FAILURES_PER_ID_AND_ADDRESS, windowSeconds },
    {
      name: 'per-id',
      limit: config.AUTH_FAILURES_PER_ID,
      windowSeconds,
      refusesOnlyAfter: 'per-id-and-address',
    },
    { name: 'per-address', limit: config.AUTH_FAILURES_PER_ADDRESS, windowSeconds },
  ]);
}

/** The keys of a credential check: the claimed id (a client id or API key id, never a secret), if well-formed. */
export function credentialKeys(id: string | undefined, address: string): FailureKeys {
  return {
    'per-id-and-address': id === undefined ? undefined : `${id}|${address}`,
    'per-id': id,
    'per-address': address,
  };
}

const KEYS = Symbol('failure keys');
type WithKeys = Response & { [KEYS]?: Map<FailureLimiter, FailureKeys> };

/** The keys this request was checked under by `refuseWhileBlocked(limiter, …)`. */
export function failureKeysOf(res: Response, limiter: FailureLimiter): FailureKeys {
  const keys = (res as WithKeys)[KEYS]?.get(limiter);
  if (!keys) throw new Error('refuseWhileBlocked must run before a failure is counted');
  return keys;
}

/**
 * A step that answers 429 when the request's id or address is at its limit as this process knows it,
 * before any record is looked up, so the right secret is refused too and the answer reveals nothing.
 * It also keeps the keys for `checkCredential` (and `failureKeysOf`).
 */
export function refuseWhileBlocked(
  limiter: FailureLimiter,
  keysOf: (req: Request, res: Response) => FailureKeys,
): RequestHandler {
  return (req, res, next) => {
    const keys = keysOf(req, res);
    const withKeys = res as WithKeys;
    (withKeys[KEYS] ??= new Map()).set(limiter, keys);
    const blocked = limiter.blocked(keys);
    next(blocked ? tooManyFailures(blocked) : undefined);
  };
}

/** Keys for a credential check of `idOf(req)` from the client's address. */
export const credentialKeysOf =
  (idOf: (req: Request) => string | undefined) =>
  (req: Request): FailureKeys =>
    credentialKeys(idOf(req), clientAddress(req));

/**
 * Runs a synchronous secret check (after the record was looked up) under this request's failure limits,
 * in one tick with the limit check and the count (FailureLimiter.checkNow), so parallel requests never
 * check more wrong secrets than the limits allow. Null when the secret is right (nothing else happens);
 * else the error to answer with: 429 when refused or now over a limit, else `failure()` carrying the
 * RateLimit fields.
 */
export function checkCredential(
  limiter: FailureLimiter,
  res: Response,
  check: () => boolean,
  failure: () => AppError,
): Promise<AppError> | null {
  const result = limiter.checkNow(failureKeysOf(res, limiter), check);
  if (result.outcome === 'passed') return null;
  if (result.outcome === 'refused') return Promise.resolve(tooManyFailures(result.refused));
  return result.count.then((count) => answerTo(count, failure()));
}

/** The answer to a counted failure. */
export function answerTo(count: FailureCount, failure: AppError): AppError {
  return count.exceeded ? tooManyFailures(count.exceeded) : failure.withHeaders(failureFields(count));
}
