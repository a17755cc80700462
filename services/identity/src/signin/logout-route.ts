import type { Request, Response, Router } from 'express';
import cookieParser from 'cookie-parser';
import { endpoint, formBody } from '@attest/common';
import { singleParams } from '../oauth';
import { pairwiseSubject } from '../kernel/ids';
import { logoutError, parseLogoutRequest, type LogoutRequest } from './logout-request';
import { errorPage, logoutConfirmPage, signedOutPage } from '../kernel/pages';
import type { KernelServices, TokenServices } from '../kernel/services';
import { firstFailure } from '../kernel/form-check';
import { LOGOUT_CONFIRM_FORM, LOGOUT_PARAMETERS } from './signin-forms';
import { csrfToken, csrfValid } from '../kernel/csrf';
import { usePageErrors } from '../kernel/page-errors';
import { clearSessionCookie, currentSession, sessionCookieOf } from '../kernel/session-cookie';
import { requireFormContentType } from '../kernel/http-steps';
import { logoutDocs, logoutConfirmDocs } from './logout-route.openapi';

export { LOGOUT_CONFIRM_FORM, LOGOUT_PARAMETERS };

const CSRF_PURPOSE = 'logout';

/**
 * GET|POST /logout: OpenID Connect RP-Initiated Logout 1.0 (the end_session_endpoint), and POST
 * /logout/confirm, the confirmation page's form. With a valid id_token_hint for the signed-in user the
 * session ends at once; otherwise the user confirms first. ui_locales is accepted (pages are English).
 */
/** What /logout uses (RP-initiated logout): the id_token_hint's check, the session, the confirmation page. */
export type LogoutRouteDeps = Pick<KernelServices, 'apps' | 'config' | 'logger' | 'users'> &
  Pick<TokenServices, 'sessions' | 'tokens'>;

export function logoutRoute(router: Router, ctx: LogoutRouteDeps): void {
  const parse = async (source: unknown): Promise<LogoutRequest> => {
    const { params, duplicate } = singleParams((source ?? {}) as Record<string, unknown>);
    if (duplicate) throw logoutError.duplicate(duplicate);
    return parseLogoutRequest(params, ctx);
  };

  const done = (req: Request, res: Response, request: LogoutRequest, signedOut: boolean) => {
    if (!request.postLogoutRedirectUri) return signedOutPage(res, signedOut);
    const url = new URL(request.postLogoutRedirectUri);
    if (request.state !== undefined) url.searchParams.set('state', request.state);
    res
      .set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' })
      .redirect(req.method === 'GET' ? 302 : 303, url.toString());
  };

  const endSession = async (req: Request, res: Response) => {
    const ended = await ctx.sessions.endByCookie(sessionCookieOf(req, ctx));
    clearSessionCookie(ctx, res);
    if (ended) ctx.logger.info('session ended', { user_id: ended.userId, by: 'logout' });
  };

  const logout = async (req: Request, res: Response) => {
    const request = await parse(req.method === 'POST' ? req.body : req.query);
    const current = await currentSession(ctx, req);
    if (!current) {
      if (sessionCookieOf(req, ctx)) clearSessionCookie(ctx, res);
      return done(req, res, request, true);
    }
    const hint = request.hint;
    if (hint && pairwiseSubject(ctx.config.secret, hint.aud, current.session.userId) === hint.sub) {
      await endSession(req, res);
      return done(req, res, request, true);
    }
    logoutConfirmPage(res, {
      csrf: csrfToken(ctx, req, res, CSRF_PURPOSE),
      appName: request.app?.name,
      clientId: request.app?.id,
      postLogoutRedirectUri: request.postLogoutRedirectUri,
      state: request.state,
    });
  };

  const confirm = async (req: Request, res: Response) => {
    const body = req.body as Record<string, unknown>;
    if (firstFailure(LOGOUT_CONFIRM_FORM, body, ['csrf']) || !csrfValid(ctx, req, CSRF_PURPOSE, body.csrf as string)) {
      return errorPage(res, 403, {
        code: 'invalid_csrf',
        detail: 'The form could not be verified. Go back and try again.',
        attribute: 'csrf',
      });
    }
    const { csrf: _csrf, decision, ...rest } = body;
    // client_id, post_logout_redirect_uri and state are checked as at /logout, a repeat of any field refused
    const request = await parse(rest);
    if (firstFailure(LOGOUT_CONFIRM_FORM, { decision }, ['decision']))
      return errorPage(res, 400, {
        code: 'invalid_parameter',
        detail: 'decision must be logout or stay.',
        attribute: 'decision',
      });
    if (decision === 'logout') await endSession(req, res);
    done(req, res, request, decision === 'logout');
  };

  endpoint(
    router,
    '/logout',
    {
      GET: [cookieParser(), logout],
      POST: [cookieParser(), requireFormContentType, formBody(ctx.config.BODY_LIMIT), logout],
    },
    logoutDocs,
  );
  endpoint(
    router,
    '/logout/confirm',
    {
      POST: [cookieParser(), requireFormContentType, formBody(ctx.config.BODY_LIMIT), confirm],
    },
    logoutConfirmDocs,
  );
  usePageErrors(router, '/logout');
}
