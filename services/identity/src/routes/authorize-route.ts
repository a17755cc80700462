import type { NextFunction, Request, Response, Router } from 'express';
import cookieParser from 'cookie-parser';
import { AppError, clientAddress, endpoint, formBody } from '@attest/common';
import {
  errorTarget,
  identifyClient,
  pageError,
  parseAuthorizationRequest,
  singleParams,
} from '../domain/authorization-request';
import { RedirectError } from '../domain/oauth-error';
import { begin, respondWithError } from './authorization-flow';
import type { IdentityContext } from './context';
import { currentSession } from './session-cookie';
import { pageErrors, showPageError } from './page-errors';
import { identityDocs } from './openapi-document';

/** The schema parseAuthorizationRequest and identifyClient check with, as the document shows it. */
export { AUTHORIZE_PARAMETERS } from '../domain/authorization-request';

/** GET|POST /authorize (SPEC 4.2): validate, then sign-in → consent → back to the app. */
export function authorizeRoute(router: Router, ctx: IdentityContext): void {
  const handle = async (req: Request, res: Response, _next: NextFunction) => {
    const source = (req.method === 'POST' ? req.body : req.query) as Record<string, unknown>;
    const { params, duplicate } = singleParams(source ?? {});
    let client;
    try {
      if (duplicate && ['client_id', 'redirect_uri'].includes(duplicate)) throw pageError.duplicate(duplicate);
      client = await identifyClient(params, ctx.apps);
    } catch (err) {
      if (err instanceof AppError && err.status < 500) return showPageError(req, res, err);
      throw err;
    }
    const target = errorTarget(params, client.redirectUri);
    let request;
    try {
      if (duplicate) throw new RedirectError('invalid_request', `The ${duplicate} parameter must be given once.`);
      request = parseAuthorizationRequest(params, client.app.id, client.redirectUri, client.app);
    } catch (err) {
      if (err instanceof RedirectError) return respondWithError(res, target, err);
      throw err;
    }
    const current = await currentSession(ctx, req);
    await begin(ctx, req, res, request, current?.session ?? null, () => clientAddress(req));
  };
  endpoint(
    router,
    '/authorize',
    {
      GET: [cookieParser(), handle],
      POST: [cookieParser(), formBody(ctx.config.BODY_LIMIT), handle],
    },
    identityDocs.authorize,
  );
  router.use('/authorize', pageErrors);
}
