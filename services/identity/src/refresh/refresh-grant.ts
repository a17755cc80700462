import type { NextFunction, Request, Response } from 'express';
import { AppError, errors, requestActor, sendJson } from '@attest/common';
import type { App } from '../kernel/app-store';
import { repeatedField } from '../kernel/form-check';
import { DpopError, dpopHeader, type DpopProofs } from '../oauth';
import type { RefreshTokens } from './refresh-tokens';

/** What grant_type=refresh_token at /token uses. */
export interface RefreshGrantDeps {
  config: { issuer: string };
  dpop: Pick<DpopProofs, 'nonce' | 'verify'>;
  refresh: Pick<RefreshTokens, 'refresh'>;
}

const one = (req: Request, name: string): string | undefined => {
  const value = (req.body as Record<string, unknown>)[name];
  if (Array.isArray(value)) {
    if (name === 'resource')
      throw new AppError('invalid_target', 400, 'Send one resource per request (RFC 8707).', 'resource');
    throw repeatedField(name);
  }
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/**
 * POST /token grant_type=refresh_token (RFC 6749 §6), after the app's authentication: refresh_token, an
 * optional narrower `scope` or the grant's `resource`, and a DPoP proof as at the code exchange (a bound
 * grant needs one by its key). Answers a new access token and the next refresh token of the family.
 */
export function refreshTokenGrant(deps: RefreshGrantDeps) {
  return async (req: Request, res: Response, _next: NextFunction) => {
    const app = res.locals.app as App;
    const token = one(req, 'refresh_token');
    if (!token) throw errors.required('refresh_token');
    let dpopJkt: string | undefined;
    const header = dpopHeader(req);
    if (header !== undefined) {
      res.set('DPoP-Nonce', deps.dpop.nonce());
      try {
        dpopJkt = (await deps.dpop.verify(header, { htm: 'POST', htu: `${deps.config.issuer}/token` })).jkt;
      } catch (err) {
        if (!(err instanceof DpopError)) throw err;
        throw new AppError(err.error, 400, err.description, 'DPoP');
      }
    } else if (app.dpopBoundAccessTokens)
      throw new AppError(
        'invalid_request',
        400,
        'This app requires a DPoP proof (DPoP header) at the token endpoint.',
        'DPoP',
      );
    const result = await deps.refresh.refresh({
      app,
      token,
      dpopJkt,
      scope: one(req, 'scope'),
      resource: one(req, 'resource'),
      actor: requestActor(req, 'anonymous', null),
    });
    sendJson(res, result);
  };
}
