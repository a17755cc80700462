import type { Request, Response, Router } from 'express';
import { AppError, constantTimeEqual, endpoint, sendJson } from '@attest/common';
import {
  AUTHORIZE_PARAMETERS,
  bindResource,
  parseAuthorizationRequest,
  singleParams,
  type Params,
} from './authorization-request';
import { DpopError, dpopAlgorithmsOf, dpopHeader, verifyDpopProof } from './dpop';
import { oauthJsonErrors, RedirectError } from './oauth-error';
import { openRequestObject } from './request-object';
import type { OAuthServices } from './services';
import type { ClientAuthDeps } from './client-authentication';
import { PAR_FORM } from './oauth-forms';
import { refuseBlockedClient } from '../kernel/failure-limits';
import { authenticateApp, authenticatedApp, parseForm } from './client-authentication';
import { noStore, requireFormContentType } from '../kernel/http-steps';
import { parDocs } from './par-route.openapi';
import { oneResourceOnly, type ResourceDirectory } from '../resources';

export { PAR_FORM };

/**
 * The parameters a pushed request keeps: those /authorize reads (AUTHORIZE_PARAMETERS), so what waits in
 * the cache is bounded like a parked sign-in; the app's credentials and unknown parameters are dropped.
 */
const KEPT = new Set(Object.keys((AUTHORIZE_PARAMETERS.describe() as { keys: Record<string, unknown> }).keys));
const kept = (params: Params): Params => Object.fromEntries(Object.entries(params).filter(([name]) => KEPT.has(name)));

/** Our codes as OAuth error names (RFC 9126 §2.3 answers as the token endpoint does); any other is invalid_request. */
const OAUTH_ERROR: Record<string, string> = {
  unauthenticated: 'invalid_client',
  too_many_requests: 'temporarily_unavailable',
  invalid_request_object: 'invalid_request_object',
  invalid_scope: 'invalid_scope',
  invalid_target: 'invalid_target',
  unsupported_response_type: 'unsupported_response_type',
  unauthorized_client: 'unauthorized_client',
  invalid_dpop_proof: 'invalid_dpop_proof',
  use_dpop_nonce: 'use_dpop_nonce',
};

const invalidRequest = (detail: string, attribute: string | null = null) =>
  new AppError('invalid_request', 400, detail, attribute);

/**
 * POST /par (RFC 9126): an authenticated app pushes an authorization request (its parameters, or a signed
 * request object) and gets a request_uri to send the browser to /authorize with, once, within 60 s. The
 * request is checked now as /authorize would check it, so a mistake is a JSON error here rather than a
 * redirect later; the app's keys, its secret or PKCE (a public client) are proven as at /token.
 */
/** What /par uses: client authentication, DPoP, the pushed requests' store. */
export type ParRouteDeps = ClientAuthDeps &
  Pick<OAuthServices, 'dpop' | 'pushedRequests'> & { resources: Pick<ResourceDirectory, 'findByUri'> };

export function parRoute(router: Router, ctx: ParRouteDeps): void {
  /** The thumbprint of the request's DPoP proof (htm POST, htu the /par URL); undefined without one. */
  const dpopKey = async (req: Request, res: Response): Promise<string | undefined> => {
    if (dpopHeader(req) === undefined) return undefined;
    res.set('DPoP-Nonce', ctx.dpop.nonce());
    try {
      const expected = { htm: 'POST', htu: `${ctx.config.issuer}/par`, ...dpopAlgorithmsOf(authenticatedApp(res)) };
      return (await verifyDpopProof(ctx.dpop, req, expected)).jkt;
    } catch (err) {
      if (err instanceof DpopError) throw new AppError(err.error, 400, err.description, 'DPoP');
      throw err;
    }
  };
  const push = async (req: Request, res: Response) => {
    const app = authenticatedApp(res);
    const { params: sent, duplicate } = singleParams((req.body ?? {}) as Record<string, unknown>);
    if (duplicate === 'resource') throw new AppError('invalid_target', 400, oneResourceOnly().description, 'resource');
    if (duplicate) throw invalidRequest(`The ${duplicate} parameter must be given once.`, duplicate);
    if (sent.request_uri !== undefined)
      throw invalidRequest('request_uri cannot be pushed: send the parameters, or a request object.', 'request_uri');
    if (sent.client_id !== undefined && sent.client_id !== app.id)
      throw invalidRequest('client_id must be the authenticated app’s.', 'client_id');
    const params = kept(
      sent.request === undefined
        ? sent
        : await openRequestObject(ctx.clientKeys, ctx.cache, app, sent.request, {
            issuer: ctx.config.issuer,
            nowSeconds: Math.floor(ctx.tokens.now() / 1000),
          }),
    );
    params.client_id = app.id;
    // RFC 9449 §10.1: a proof binds the code to its key, as dpop_jkt does; both sent, they must agree
    const jkt = await dpopKey(req, res);
    if (jkt !== undefined) {
      if (params.dpop_jkt !== undefined && !constantTimeEqual(params.dpop_jkt, jkt))
        throw invalidRequest('dpop_jkt must be the thumbprint of the DPoP proof’s key.', 'dpop_jkt');
      params.dpop_jkt = jkt;
    }
    const redirectUri = params.redirect_uri;
    if (!redirectUri) throw new AppError('required', 400, 'This attribute is required.', 'redirect_uri');
    if (!app.redirectUris.includes(redirectUri))
      throw new AppError('invalid_redirect_uri', 400, 'Invalid redirect_uri provided.', 'redirect_uri');
    try {
      await bindResource(ctx.resources, parseAuthorizationRequest(params, app.id, redirectUri, app), params);
    } catch (err) {
      if (err instanceof RedirectError) throw new AppError(err.error, 400, err.description);
      throw err;
    }
    const pushed = await ctx.pushedRequests.push({ clientId: app.id, params });
    sendJson(res, { request_uri: pushed.requestUri, expires_in: pushed.expiresIn }, 201);
  };
  endpoint(
    router,
    '/par',
    {
      POST: [
        noStore,
        requireFormContentType,
        parseForm(ctx.config.BODY_LIMIT),
        refuseBlockedClient(ctx.limits),
        authenticateApp(ctx, { allowPost: true, allowPublic: true }),
        push,
      ],
    },
    parDocs,
  );
  router.use('/par', oauthJsonErrors(OAUTH_ERROR));
}
