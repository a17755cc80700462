import { createHmac, randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { AuthorizationRequest, ErrorTarget, ResponseMode } from '../domain/authorization-request';
import { constantTimeEqual } from '@attest/common';
import { nextStep } from '../domain/authorization-step';
import { redirectErrors, type RedirectError } from '../domain/oauth-error';
import type { Interaction, Session } from '../domain/sessions';
import { errorPage, formPostPage } from '../views/pages';
import type { IdentityContext } from './context';

export const SESSION_COOKIE = 'attest_session';
export const CSRF_COOKIE = 'attest_csrf';

const secureCookies = (ctx: IdentityContext) => ctx.config.BASE_URL.startsWith('https:');

/** Sends the authorization response (or error) to the app in the request's response mode. */
export function respondToApp(res: Response, target: { redirectUri: string; responseMode: ResponseMode }, values: Record<string, string>, status = 302): void {
  if (target.responseMode === 'form_post') return formPostPage(res, target.redirectUri, values);
  const url = new URL(target.redirectUri);
  if (target.responseMode === 'query') {
    for (const [k, v] of Object.entries(values)) url.searchParams.set(k, v);
  } else {
    url.hash = new URLSearchParams(values).toString();
  }
  res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }).redirect(status, url.toString());
}

export function respondWithError(res: Response, target: ErrorTarget, error: RedirectError, status = 302): void {
  const values: Record<string, string> = { error: error.error, error_description: error.description };
  if (target.state !== undefined) values.state = target.state;
  respondToApp(res, target, values, status);
}

/** The browser's session, unless its user has since been deleted or disabled (a memory lookup once warm). */
export async function currentSession(ctx: IdentityContext, req: Request): Promise<{ id: string; session: Session } | null> {
  const id = (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];
  const session = await ctx.sessions.find(id);
  if (!session || !id) return null;
  const user = await ctx.users.findById(session.userId);
  return user && !user.disabledAt ? { id, session } : null;
}

export function setSessionCookie(ctx: IdentityContext, res: Response, id: string): void {
  res.cookie(SESSION_COOKIE, id, { httpOnly: true, secure: secureCookies(ctx), sameSite: 'lax', path: '/', maxAge: ctx.config.SESSION_TTL_SECONDS * 1000 });
}

/** Double-submit CSRF token: an HttpOnly browser cookie, and a form field that is its MAC bound to the interaction. */
export function csrfToken(ctx: IdentityContext, req: Request, res: Response, interactionId: string): string {
  let browser = (req.cookies as Record<string, string> | undefined)?.[CSRF_COOKIE];
  if (!browser || !/^[0-9a-f]{64}$/.test(browser)) {
    browser = randomBytes(32).toString('hex');
    res.cookie(CSRF_COOKIE, browser, { httpOnly: true, secure: secureCookies(ctx), sameSite: 'lax', path: '/' });
  }
  return createHmac('sha256', ctx.config.secret).update(`csrf:${browser}:${interactionId}`).digest('hex');
}

export function csrfValid(ctx: IdentityContext, req: Request, interactionId: string, presented: string | undefined): boolean {
  const browser = (req.cookies as Record<string, string> | undefined)?.[CSRF_COOKIE];
  if (!browser || !presented) return false;
  const expected = createHmac('sha256', ctx.config.secret).update(`csrf:${browser}:${interactionId}`).digest('hex');
  return constantTimeEqual(expected, presented);
}

export function expiredInteraction(res: Response): void {
  errorPage(res, 400, { code: 'invalid_request', detail: 'This sign-in request has expired or is unknown. Go back to the app and start again.', attribute: 'interaction' });
}

/**
 * For a form POST of the sign-in or consent page: the interaction it belongs to, after the CSRF check.
 * Null when it already answered with an error page.
 */
export async function postedInteraction(ctx: IdentityContext, req: Request, res: Response): Promise<{ id: string; interaction: Interaction } | null> {
  const body = req.body as Record<string, unknown>;
  const id = typeof body.interaction === 'string' ? body.interaction : '';
  const interaction = await ctx.interactions.find(id);
  if (!interaction) {
    expiredInteraction(res);
    return null;
  }
  if (!csrfValid(ctx, req, id, typeof body.csrf === 'string' ? body.csrf : undefined)) {
    errorPage(res, 403, { code: 'invalid_csrf', detail: 'The form could not be verified. Go back and try again.', attribute: 'csrf' });
    return null;
  }
  return { id, interaction };
}

const stepErrors = { login_required: redirectErrors.loginRequired, consent_required: redirectErrors.consentRequired };

/**
 * /authorize: a signed-in user who already consented goes straight back to the app, and nothing is
 * written for it; an interaction is parked only when a page (sign-in or consent) is needed.
 */
export async function begin(
  ctx: IdentityContext,
  res: Response,
  request: AuthorizationRequest,
  session: Session | null,
): Promise<void> {
  const granted = session ? await ctx.consents.find(session.userId, request.clientId) : [];
  const step = nextStep(request, {}, session, granted);
  if (step === 'finish') return respondToApp(res, request, await ctx.grants.authorize(request, session!), 302);
  if (step === 'login_required' || step === 'consent_required') {
    return respondWithError(res, request, stepErrors[step](), 302);
  }
  const id = await ctx.interactions.create({ request });
  res.redirect(302, `/${step}?interaction=${id}`);
}

/**
 * Moves an interaction on: to sign-in, to consent, or to the app with its code and tokens.
 * `status` is 302 after a GET and 303 after a form POST.
 */
export async function proceed(ctx: IdentityContext, res: Response, interactionId: string, interaction: Interaction, session: Session | null, status: 302 | 303): Promise<void> {
  const request = interaction.request;
  const granted = session ? await ctx.consents.find(session.userId, request.clientId) : [];
  const step = nextStep(request, interaction, session, granted);
  if (step === 'login_required' || step === 'consent_required') {
    return finishWithError(ctx, res, interactionId, request, stepErrors[step](), status);
  }
  if (step === 'signin') return res.redirect(status === 302 ? 302 : 303, `/signin?interaction=${interactionId}`);
  if (step === 'consent') return res.redirect(status, `/consent?interaction=${interactionId}`);
  if (!(await ctx.interactions.finish(interactionId))) {
    return void res.redirect(status, `/signin?interaction=${interactionId}`);
  }
  const values = await ctx.grants.authorize(request, session!);
  respondToApp(res, request, values, status);
}

export async function finishWithError(ctx: IdentityContext, res: Response, interactionId: string, request: AuthorizationRequest, error: RedirectError, status: 302 | 303): Promise<void> {
  await ctx.interactions.finish(interactionId);
  respondWithError(res, { redirectUri: request.redirectUri, responseMode: request.responseMode, state: request.state }, error, status);
}
