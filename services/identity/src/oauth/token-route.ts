import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import {
  answerTo,
  AppError,
  endpoint,
  errors,
  failureKeysOf,
  requestActor,
  sendJson,
  toAppError,
  tooManyFailures,
} from '@attest/common';
import { grantField, tokenDpopJkt } from './token-grant';
import { APP_ID } from '../kernel/ids';
import type { OAuthServices } from './services';
import type { ClientAuthDeps } from './client-authentication';
import { checkForm, fieldError, type FieldFailure } from '../kernel/form-check';
import { TOKEN_FORM } from './oauth-forms';
import { refuseBlockedClient, refuseBlockedCodes } from '../kernel/failure-limits';
import { authenticateApp, authenticatedApp, field, parseForm } from './client-authentication';
import { noStore, requireFormContentType } from '../kernel/http-steps';
import { tokenDocs } from './token-route.openapi';

export { TOKEN_FORM };

/** The OAuth 2.0 `error` name for each of our codes, so standard clients understand /token errors. */
export const OAUTH_TOKEN_ERRORS: Record<string, string> = {
  method_not_allowed: 'invalid_request',
  invalid_content_type: 'invalid_request',
  required: 'invalid_request',
  invalid_request: 'invalid_request',
  invalid_body: 'invalid_request',
  invalid_parameter: 'invalid_request',
  payload_too_large: 'invalid_request',
  unsupported_encoding: 'invalid_request',
  unsupported_charset: 'invalid_request',
  unauthenticated: 'invalid_client',
  unauthorized_client: 'unauthorized_client',
  invalid_grant_type: 'unsupported_grant_type',
  invalid_grant: 'invalid_grant',
  invalid_target: 'invalid_target',
  invalid_scope: 'invalid_scope',
  invalid_dpop_proof: 'invalid_dpop_proof',
  use_dpop_nonce: 'use_dpop_nonce',
  // CIBA Core §11 (issue 42; the device grant's RFC 8628 §3.5 answers are the same names)
  authorization_pending: 'authorization_pending',
  slow_down: 'slow_down',
  expired_token: 'expired_token',
  access_denied: 'access_denied',
  // RFC 6749 names no error for this; clients treat it as "try again later"
  too_many_requests: 'temporarily_unavailable',
};

/** Each error of /token with its OAuth `error` and `error_description` (RFC 6749 §5.2); a 5xx is left as it is. */
const oauthTokenErrors = (err: unknown, req: Request, res: Response, next: NextFunction) => {
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  const appError = toAppError(err, req);
  // any other client error is a malformed request in OAuth terms (RFC 6749 §5.2)
  const error = OAUTH_TOKEN_ERRORS[appError.code] ?? (appError.status < 500 ? 'invalid_request' : undefined);
  if (!error) return next(err);
  next(appError.withExtra({ error, error_description: appError.detail }));
};

/** grant_type, absent or not authorization_code, is unsupported_grant_type (RFC 6749 §5.2); a repeat is invalid_request. */
const grantTypeError = (failure: FieldFailure) =>
  failure.name === 'grant_type' && failure.problem !== 'repeated'
    ? new AppError(
        'invalid_grant_type',
        400,
        'Invalid grant type. Supported: authorization_code, refresh_token, client_credentials, ' +
          'urn:ietf:params:oauth:grant-type:device_code, urn:ietf:params:oauth:grant-type:token-exchange.',
        'grant_type',
      )
    : fieldError(failure);

/** CORS for a page of one of the app's registered web origins (a public client in a browser). */
const webOriginCors = (ctx: TokenRouteDeps) => async (req: Request, res: Response, next: NextFunction) => {
  const origin = req.get('origin');
  if (!origin) return next();
  res.vary('Origin');
  const clientId = (req.body as Record<string, unknown> | undefined)?.client_id;
  const app = typeof clientId === 'string' && APP_ID.test(clientId) ? await ctx.apps.find(clientId) : null;
  if (app?.webOrigins.includes(origin))
    res.set({ 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': 'DPoP-Nonce' });
  next();
};

/** A preflight is answered for an origin some app registered; anything else gets the plain OPTIONS answer. */
const preflight = (ctx: TokenRouteDeps) => async (req: Request, res: Response) => {
  const origin = req.get('origin');
  res.set('Allow', 'POST, OPTIONS');
  if (origin && req.get('access-control-request-method')) {
    res.vary('Origin');
    if (await ctx.apps.originRegistered(origin)) {
      res.set({
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Methods': 'POST',
        'Access-Control-Allow-Headers': 'Content-Type, Authorization, Accept, DPoP',
        'Access-Control-Max-Age': '600',
      });
    }
  }
  res.status(204).end();
};

/** A public client proves itself with the PKCE verifier: without one there is nothing to check. */
const requirePublicClientVerifier = (req: Request, res: Response, next: NextFunction) => {
  next(authenticatedApp(res).public && !field(req, 'code_verifier') ? errors.required('code_verifier') : undefined);
};

/** DPoP (RFC 9449 §5): a proof binds the tokens to its key (res.locals.dpopJkt); see token-grant.ts. */
const dpopProof = (ctx: TokenRouteDeps) => async (req: Request, res: Response, next: NextFunction) => {
  res.locals.dpopJkt = await tokenDpopJkt(ctx, req, res, authenticatedApp(res));
  next();
};

/**
 * POST /token (SPEC 4.3): method → content type → failure limits → app credentials → grant_type → code →
 * redirect_uri (TOKEN_FORM, form-schemas.ts) → (public client) code_verifier → code failure limits → DPoP proof → exchange. A public client (no secret)
 * authenticates by client_id and PKCE; pages of its web origins get CORS. A failed exchange counts against the code limits
 * (a public client's per (client, address) and per address; see failure-limits.ts), its slot taken before the code is looked up.
 */
/** What /token uses: client authentication, DPoP, the grants. */
export type TokenRouteDeps = ClientAuthDeps &
  Pick<OAuthServices, 'dpop' | 'grants'> & {
    /**
     * Grant types other than authorization_code, by name (issue 41: refresh_token, client_credentials), each
     * answering after the app's authentication; bound in the composition root.
     */
    grantTypes?: Record<string, RequestHandler>;
  };

export function tokenRoute(router: Router, ctx: TokenRouteDeps): void {
  /** Another grant type's steps, when the request names one; authorization_code goes on. */
  const otherGrant = async (req: Request, res: Response, next: NextFunction) => {
    const type = (req.body as Record<string, unknown>).grant_type;
    const handler = typeof type === 'string' && type !== 'authorization_code' ? ctx.grantTypes?.[type] : undefined;
    if (!handler) return next();
    await handler(req, res, next);
  };
  const exchange = async (req: Request, res: Response) => {
    const input = {
      clientId: authenticatedApp(res).id,
      code: field(req, 'code')!,
      redirectUri: field(req, 'redirect_uri')!,
      codeVerifier: field(req, 'code_verifier'),
      dpopJkt: res.locals.dpopJkt as string | undefined,
      resource: grantField(req, 'resource'),
      // the app's access token algorithm (PS256 or ES256 for a fapi2 app; issue 40, item 5)
      accessTokenAlg: authenticatedApp(res).accessTokenSignedResponseAlg,
      actor: requestActor(req, 'anonymous', null),
    };
    // a slot is taken before the code is looked up, and given back unless the exchange is invalid_grant
    const admission = await ctx.limits.codes.reserveHere(failureKeysOf(res, ctx.limits.codes));
    if (admission.refused) throw tooManyFailures(admission.refused);
    const { attempt } = admission;
    const result = await ctx.grants.exchangeCode(input).catch(async (err: unknown) => {
      if (!(err instanceof AppError && err.code === 'invalid_grant')) {
        await attempt.succeeded();
        throw err;
      }
      throw answerTo(await attempt.failed(), err);
    });
    await attempt.succeeded();
    sendJson(res, result);
  };
  endpoint(
    router,
    '/token',
    {
      POST: [
        noStore,
        requireFormContentType,
        parseForm(ctx.config.BODY_LIMIT),
        webOriginCors(ctx),
        refuseBlockedClient(ctx.limits),
        authenticateApp(ctx, { allowPost: true, allowPublic: true }),
        otherGrant,
        checkForm(TOKEN_FORM, ['grant_type', 'code', 'redirect_uri'], grantTypeError),
        requirePublicClientVerifier,
        refuseBlockedCodes(ctx.limits),
        checkForm(TOKEN_FORM, ['code_verifier']),
        dpopProof(ctx),
        exchange,
      ],
      OPTIONS: [preflight(ctx)],
    },
    tokenDocs,
    // answered before the router (FastPath: its matching was 6 % of a client_credentials answer's
    // profile), the OAuth error names alike
    { fast: true, onError: oauthTokenErrors },
  );
}
