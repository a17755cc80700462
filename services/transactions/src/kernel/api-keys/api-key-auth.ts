import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  AppError,
  checkCredential,
  clientAddress,
  credentialKeysOf,
  errors,
  refuseWhileBlocked,
  type AuditActor,
  type FailureLimiter,
} from '@attest/common';
import type { ApiKeyService, VerifiedKey } from './api-key-service';
import { parseApiKey, type ParsedApiKey } from './api-keys';

const BEARER = 'Bearer realm="attest-api"';
const BEARER_KEY = /^Bearer\s+(\S+)\s*$/i;
const unknownKey = () =>
  errors.unauthenticated('The API key is unknown or revoked.', `${BEARER}, error="invalid_token"`);

/** The key is right but an operator disabled its app (not a failure: the limits do not count it). */
const appDisabled = () =>
  errors.unauthenticated(
    "This API key's app is disabled; it works again once an operator enables the app.",
    `${BEARER}, error="invalid_token"`,
  );

export interface ApiKeyAuthDeps {
  apiKeys: ApiKeyService;
  /** Failed API-key checks, per key id (never the secret part) and per client address. */
  failures: FailureLimiter;
}

const PRESENTED = Symbol('presented API key');
type WithPresented = Request & { [PRESENTED]?: ParsedApiKey | null };

/** The API key a request presents as `Bearer <API_KEY>`, parsed once per request (its secret not yet checked). */
function presentedKey(req: Request): ParsedApiKey | null {
  const withPresented = req as WithPresented;
  let parsed = withPresented[PRESENTED];
  if (parsed === undefined) {
    const token = BEARER_KEY.exec(req.get('authorization') ?? '')?.[1];
    parsed = withPresented[PRESENTED] = token === undefined ? null : parseApiKey(token);
  }
  return parsed;
}

/** The API key id a request presents, read without checking its secret. */
const presentedKeyId = (req: Request) => presentedKey(req)?.keyId;

/**
 * The app's API key (`Authorization: Bearer <API_KEY>`), for every app endpoint: refused while its key id
 * or the client address is over the failure limits; a wrong or unknown key counts against them.
 * The verified key is in `res.locals.key`.
 */
export function apiKeyAuthentication(deps: ApiKeyAuthDeps): RequestHandler[] {
  const authenticate = async (req: Request, res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    if (!header)
      return next(errors.unauthenticated('Provide your API key as Authorization: Bearer <API_KEY>.', BEARER));
    if (!BEARER_KEY.test(header))
      return next(errors.unauthenticated('The Authorization header must be Bearer <API_KEY>.', BEARER));
    const presented = presentedKey(req);
    const record = presented && (await deps.apiKeys.find(presented.keyId));
    // the secret is compared under the failure limits, in one tick with their check and count
    let key: VerifiedKey | null = null;
    const failure = checkCredential(
      deps.failures,
      res,
      () => (key = presented && deps.apiKeys.check(presented, record)) !== null,
      unknownKey,
    );
    if (failure) return next(await failure);
    // a right key of a disabled app is refused, and not counted as a failure
    const verified = key as VerifiedKey | null;
    if (verified?.appDisabled) return next(appDisabled());
    res.locals.key = verified;
    next();
  };
  return [refuseWhileBlocked(deps.failures, credentialKeysOf(presentedKeyId)), authenticate];
}

export const verifiedKey = (res: Response) => res.locals.key as VerifiedKey;

/** 403 invalid_app: a valid key of another app than `app_id`. */
export const invalidApp = () => new AppError('invalid_app', 403, 'This API key does not belong to app_id.', 'app_id');

/** The app whose verified key made the request, as the audit trail's actor. */
export const appActor = (req: Request, res: Response): AuditActor => ({
  type: 'app',
  id: verifiedKey(res).keyId,
  requestId: req.id,
  clientAddress: clientAddress(req),
});
