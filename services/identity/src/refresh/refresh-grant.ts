import type { NextFunction, Request, Response } from 'express';
import { AppError, errors, requestActor, sendJson } from '@attest/common';
import type { App } from '../kernel/app-store';
import { grantField, tokenDpopJkt, type TokenGrantDeps } from '../oauth';
import type { RefreshTokens } from './refresh-tokens';

/** What grant_type=refresh_token at /token uses. */
export interface RefreshGrantDeps extends TokenGrantDeps {
  refresh: Pick<RefreshTokens, 'refresh'>;
}

/**
 * POST /token grant_type=refresh_token (RFC 6749 §6), after the app's authentication: refresh_token, an
 * optional narrower `scope` or the grant's `resource`, and a DPoP proof as at the code exchange (a bound
 * grant needs one by its key). Answers a new access token and the next refresh token of the family.
 */
export function refreshTokenGrant(deps: RefreshGrantDeps) {
  return async (req: Request, res: Response, _next: NextFunction) => {
    const app = res.locals.app as App;
    // a client that registered itself holds to its grant_types (RFC 7591 §2): one that dropped
    // refresh_token (RFC 7592 update) refreshes no more, whatever it was given before
    if (app.registration !== 'operator' && !app.refreshTokenGrant)
      throw new AppError(
        'unauthorized_client',
        400,
        'This client did not register the refresh_token grant type (grant_types).',
        'grant_type',
      );
    const token = grantField(req, 'refresh_token');
    if (!token) throw errors.required('refresh_token');
    const dpopJkt = await tokenDpopJkt(deps, req, res, app);
    const result = await deps.refresh.refresh({
      app,
      token,
      dpopJkt,
      scope: grantField(req, 'scope'),
      resource: grantField(req, 'resource'),
      actor: requestActor(req, 'anonymous', null),
    });
    sendJson(res, result);
  };
}
