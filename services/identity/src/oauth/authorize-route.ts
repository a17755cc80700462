import type { NextFunction, Request, Response, Router } from 'express';
import cookieParser from 'cookie-parser';
import { AppError, clientAddress, endpoint, formBody } from '@attest/common';
import {
  bindResource,
  errorTarget,
  identifyClient,
  pageError,
  parseAuthorizationRequest,
  singleParams,
  type Params,
} from './authorization-request';
import { isClientId } from '../kernel/ids';
import { RedirectError, redirectErrors } from './oauth-error';
import { openRequestObject } from './request-object';
import { respondWithError } from './authorization-flow';
import type { KernelServices, TokenServices } from '../kernel/services';
import type { OAuthServices } from './services';
import type { AuthorizationFlow } from './authorization-flow';
import { currentSession } from '../kernel/session-cookie';
import { showPageError, usePageErrors } from '../kernel/page-errors';
import { authorizeDocs } from './authorize-route.openapi';
import { oneResourceOnly, type ResourceDirectory } from '../resources';

/** The schema parseAuthorizationRequest and identifyClient check with, as the document shows it. */
export { AUTHORIZE_PARAMETERS } from './authorization-request';

const unknownRequestUri = () =>
  new AppError(
    'invalid_request_uri',
    400,
    'This request_uri is unknown, expired or already used. Go back to the app and start again.',
    'request_uri',
  );

/**
 * The parameters of a pushed request (request_uri, RFC 9126 §4: single use, the app's own) or of a signed
 * request object (request, RFC 9101 §6.3): they replace whatever else was sent but client_id. Failures
 * are shown on a page: the redirect URI they would go to is not trusted yet.
 */
async function resolveRequest(
  ctx: AuthorizeRouteDeps,
  sent: Params,
  from: string,
): Promise<{ params: Params; pushed: boolean }> {
  const clientId = sent.client_id;
  if (!clientId) throw pageError.required('client_id');
  const app = isClientId(clientId) ? await ctx.apps.find(clientId, from) : null;
  if (!app || app.disabledAt) throw pageError.invalidClient();
  if (sent.request_uri !== undefined) {
    if (sent.request !== undefined)
      throw new AppError('invalid_request', 400, 'Send request or request_uri, not both.', 'request');
    const pushed = await ctx.pushedRequests.take(sent.request_uri, app.id);
    if (!pushed) throw unknownRequestUri();
    return { params: pushed.params, pushed: true };
  }
  const params = await openRequestObject(ctx.clientKeys, ctx.cache, app, sent.request!, {
    issuer: ctx.config.issuer,
    nowSeconds: Math.floor(ctx.tokens.now() / 1000),
  });
  return { params, pushed: false };
}

/** GET|POST /authorize (SPEC 4.2): validate, then sign-in → consent → back to the app. */
/** What /authorize uses; the flow (authorization-flow.ts) holds the rest, bound in the composition root. */
export type AuthorizeRouteDeps = Pick<KernelServices, 'apps' | 'cache' | 'config' | 'users'> &
  Pick<TokenServices, 'sessions' | 'tokens'> &
  Pick<OAuthServices, 'clientKeys' | 'pushedRequests'> & {
    flow: AuthorizationFlow;
    /** RFC 8707: the registered resources. */
    resources: Pick<ResourceDirectory, 'findByUri'>;
  };

export function authorizeRoute(router: Router, ctx: AuthorizeRouteDeps): void {
  const handle = async (req: Request, res: Response, _next: NextFunction) => {
    const source = (req.method === 'POST' ? req.body : req.query) as Record<string, unknown>;
    const sent = singleParams(source ?? {});
    let { params, duplicate } = sent;
    let pushed = false;
    let client;
    try {
      if (duplicate && ['client_id', 'redirect_uri', 'request', 'request_uri'].includes(duplicate))
        throw pageError.duplicate(duplicate);
      if (params.request_uri !== undefined || params.request !== undefined) {
        ({ params, pushed } = await resolveRequest(ctx, params, clientAddress(req)));
        duplicate = undefined;
      }
      client = await identifyClient(params, ctx.apps, clientAddress(req));
    } catch (err) {
      if (err instanceof AppError && err.status < 500) return showPageError(req, res, err);
      throw err;
    }
    const target = errorTarget(params, client.redirectUri);
    let request;
    try {
      if (duplicate === 'resource') throw new RedirectError('invalid_target', oneResourceOnly().description);
      if (duplicate) throw new RedirectError('invalid_request', `The ${duplicate} parameter must be given once.`);
      if (client.app.requirePushedAuthorizationRequests && !pushed)
        throw redirectErrors.invalidRequest(
          'This app must push its authorization requests to the pushed_authorization_request_endpoint (/par) and send request_uri.',
        );
      request = parseAuthorizationRequest(params, client.app.id, client.redirectUri, client.app);
      request = await bindResource(ctx.resources, request, params);
    } catch (err) {
      if (err instanceof RedirectError) return respondWithError(res, target, err, ctx.config.issuer);
      throw err;
    }
    const current = await currentSession(ctx, req);
    await ctx.flow.begin(req, res, request, current?.session ?? null, () => clientAddress(req));
  };
  endpoint(
    router,
    '/authorize',
    {
      GET: [cookieParser(), handle],
      POST: [cookieParser(), formBody(ctx.config.BODY_LIMIT), handle],
    },
    authorizeDocs,
  );
  usePageErrors(router, '/authorize');
}
