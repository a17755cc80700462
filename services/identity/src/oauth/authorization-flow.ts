import type { Request, Response } from 'express';
import { demandOf, type AuthorizationRequest, type ErrorTarget, type ResponseMode } from './authorization-request';
import { requestedSubject, unmetDemand } from './assurance';
import { pairwiseSubject } from '../kernel/ids';
import { nextStep, type AuthorizationStep } from './authorization-step';
import { redirectErrors, RedirectError } from './oauth-error';
import type { Session } from '../kernel/sessions';
import type { Interaction } from './interactions';
import { errorPage, formPostPage, unmetRequirementsPage } from '../kernel/pages';
import type { KernelServices, TokenServices } from '../kernel/services';
import type { OAuthServices } from './services';
import { sha256 } from '../kernel/crypto';
import { csrfToken, csrfValid } from '../kernel/csrf';
import { firstFailure } from '../kernel/form-check';
import { CONSENT_FORM } from './oauth-forms';

/** What reads a parked interaction bound to this browser (its binding is a CSRF token: config's secret). */
export type InteractionDeps = Pick<KernelServices, 'config'> & Pick<OAuthServices, 'interactions'>;

/** What moving an authorization request on uses (proceed): the person, the app, consents, the grant. */
export type ProceedDeps = Pick<KernelServices, 'apps' | 'config' | 'consents' | 'users'> &
  Pick<TokenServices, 'sessions'> &
  Pick<OAuthServices, 'grants' | 'interactions'>;

/** /authorize's start (begin) also parks new interactions, a limited number per client address. */
export type BeginDeps = ProceedDeps & Pick<OAuthServices, 'interactionLimit'>;

/**
 * Sends the authorization response (or error) to the app in the request's response mode, with our issuer
 * identifier as `iss` (RFC 9207) in every one, so an app talking to several providers knows which answered.
 */
export function respondToApp(
  res: Response,
  target: { redirectUri: string; responseMode: ResponseMode },
  answer: Record<string, string>,
  issuer: string,
  status = 302,
): void {
  const values = { ...answer, iss: issuer };
  if (target.responseMode === 'form_post') return formPostPage(res, target.redirectUri, values);
  const url = new URL(target.redirectUri);
  if (target.responseMode === 'query') {
    for (const [k, v] of Object.entries(values)) url.searchParams.set(k, v);
  } else {
    url.hash = new URLSearchParams(values).toString();
  }
  res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }).redirect(status, url.toString());
}

export function respondWithError(
  res: Response,
  target: ErrorTarget,
  error: RedirectError,
  issuer: string,
  status = 302,
): void {
  const values: Record<string, string> = { error: error.error, error_description: error.description };
  if (target.state !== undefined) values.state = target.state;
  respondToApp(res, target, values, issuer, status);
}

export function expiredInteraction(res: Response): void {
  errorPage(res, 400, {
    code: 'invalid_request',
    detail: 'This sign-in request has expired or is unknown. Go back to the app and start again.',
    attribute: 'interaction',
  });
}

/**
 * The hash that binds an interaction to this browser: of a MAC of the browser's random CSRF cookie
 * (set now if it has none; the cookie helper gives it its name and attributes), for a fixed purpose. An
 * interaction started by this browser is found only with it (InteractionStore.find), so a sign-in in
 * progress cannot be continued or finished by another browser that learnt its id.
 */
export const interactionBinding = (ctx: Pick<KernelServices, 'config'>, req: Request, res: Response): string =>
  sha256(csrfToken(ctx, req, res, 'interaction-binding'));

/**
 * For a form POST of the consent page: the interaction it belongs to, after the CSRF check (both fields of
 * CONSENT_FORM). Null when it already answered with an error page.
 */
export async function postedInteraction(
  ctx: InteractionDeps,
  req: Request,
  res: Response,
): Promise<{ id: string; interaction: Interaction } | null> {
  const body = req.body as Record<string, string>;
  const interaction = firstFailure(CONSENT_FORM, body, ['interaction'])
    ? null
    : await ctx.interactions.find(body.interaction, interactionBinding(ctx, req, res));
  if (!interaction) {
    expiredInteraction(res);
    return null;
  }
  if (firstFailure(CONSENT_FORM, body, ['csrf']) || !csrfValid(ctx, req, body.interaction, body.csrf)) {
    errorPage(res, 403, {
      code: 'invalid_csrf',
      detail: 'The form could not be verified. Go back and try again.',
      attribute: 'csrf',
    });
    return null;
  }
  return { id: body.interaction, interaction };
}

/**
 * Once the person is known (a page or the app comes next): a verification level the request (an essential
 * acr) or its app (a minimum) demands and the person does not have ends the request, never with a lower
 * level. prompt=none sends unmet_authentication_requirements straight back; otherwise a page says why, and
 * its link delivers that error to the app. True when it answered. Requests without a demand skip it.
 */
async function refusedForLevel(
  ctx: ProceedDeps,
  res: Response,
  request: AuthorizationRequest,
  step: AuthorizationStep,
  session: Session | null,
  status: 302 | 303,
  interactionId?: string,
): Promise<boolean> {
  const demand = demandOf(request);
  if (!demand || !session || step === 'signin' || step === 'login_required') return false;
  const user = await ctx.users.findById(session.userId);
  const unmet = user ? unmetDemand(user.verificationLevel, demand) : null;
  if (!user || !unmet) return false;
  if (interactionId) await ctx.interactions.finish(interactionId);
  const values: Record<string, string> = { error: unmet.error.error, error_description: unmet.error.description };
  if (request.state !== undefined) values.state = request.state;
  if (request.prompt.includes('none')) {
    respondToApp(res, request, values, ctx.config.issuer, status);
    return true;
  }
  const app = await ctx.apps.find(request.clientId);
  // the resource's minimum (RFC 8707) when the app's own demand alone would have let the person through
  const appAlone = unmetDemand(user.verificationLevel, {
    acr: demand.acr,
    ...(app?.minVerificationLevel ? { minLevel: app.minVerificationLevel } : {}),
  });
  const resourceName = request.resource ? (request.resourceName ?? request.resource.uri) : undefined;
  unmetRequirementsPage(res, {
    appName: app?.name ?? request.clientId,
    ...(!appAlone && resourceName ? { askedBy: resourceName } : {}),
    wanted: unmet.wanted,
    has: user.verificationLevel,
    redirectUri: request.redirectUri,
    responseMode: request.responseMode,
    // RFC 9207: the link is an authorization response too
    values: { ...values, iss: ctx.config.issuer },
  });
  return true;
}

/** Whether the claims parameter names (id_token sub value) a person other than the session's. */
function otherSubject(
  ctx: Pick<KernelServices, 'config'>,
  request: AuthorizationRequest,
  session: Session | null,
): boolean {
  const sub = requestedSubject(request.claims);
  return (
    sub !== undefined &&
    session !== null &&
    sub !== pairwiseSubject(ctx.config.secret, request.clientId, session.userId)
  );
}

const stepErrors = { login_required: redirectErrors.loginRequired, consent_required: redirectErrors.consentRequired };

/**
 * /authorize: a signed-in user who already consented goes straight back to the app, and nothing is
 * written for it; an interaction is parked only when a page (sign-in or consent) is needed.
 */
export async function begin(
  ctx: BeginDeps,
  req: Request,
  res: Response,
  request: AuthorizationRequest,
  session: Session | null,
  /** The client address, read only when an interaction is parked (the silent sign-in never needs it). */
  addressOf: () => string,
): Promise<void> {
  // a session of another person than the one the request names is no session for it
  if (otherSubject(ctx, request, session)) session = null;
  const granted = session ? await ctx.consents.find(session.userId, request.clientId) : [];
  const step = nextStep(request, {}, session, granted);
  if (await refusedForLevel(ctx, res, request, step, session, 302)) return;
  if (step === 'finish')
    return respondToApp(res, request, await authorizeInSession(ctx, request, session!), ctx.config.issuer, 302);
  if (step === 'login_required' || step === 'consent_required') {
    return respondWithError(res, request, stepErrors[step](), ctx.config.issuer, 302);
  }
  const refused = await ctx.interactionLimit.take(addressOf());
  if (refused) throw refused;
  const id = await ctx.interactions.create({ request, browser: interactionBinding(ctx, req, res) });
  res.redirect(302, `/${step}?interaction=${id}`);
}

/**
 * Moves an interaction on: to sign-in, to consent, or to the app with its code and tokens.
 * `status` is 302 after a GET and 303 after a form POST.
 */
export async function proceed(
  ctx: ProceedDeps,
  res: Response,
  interactionId: string,
  interaction: Interaction,
  session: Session | null,
  status: 302 | 303,
): Promise<void> {
  const request = interaction.request;
  if (otherSubject(ctx, request, session)) {
    if (interaction.signedIn)
      return finishWithError(
        ctx,
        res,
        interactionId,
        request,
        new RedirectError(
          'login_required',
          'The person who signed in is not the one the claims parameter names (id_token sub value).',
        ),
        status,
      );
    session = null;
  }
  const granted = session ? await ctx.consents.find(session.userId, request.clientId) : [];
  const step = nextStep(request, interaction, session, granted);
  if (await refusedForLevel(ctx, res, request, step, session, status, interactionId)) return;
  if (step === 'login_required' || step === 'consent_required') {
    return finishWithError(ctx, res, interactionId, request, stepErrors[step](), status);
  }
  if (step === 'signin') return res.redirect(status === 302 ? 302 : 303, `/signin?interaction=${interactionId}`);
  if (step === 'consent') return res.redirect(status, `/consent?interaction=${interactionId}`);
  if (!(await ctx.interactions.finish(interactionId))) {
    return void res.redirect(status, `/signin?interaction=${interactionId}`);
  }
  const values = await authorizeInSession(ctx, request, session!);
  respondToApp(res, request, values, ctx.config.issuer, status);
}

/**
 * The app's code and tokens; the session remembers the app (for back-channel logout) the first time only,
 * before any token is issued: ending the session revokes the tokens of every app it remembers.
 */
async function authorizeInSession(
  ctx: Pick<TokenServices, 'sessions'> & Pick<OAuthServices, 'grants'>,
  request: AuthorizationRequest,
  session: Session,
): Promise<Record<string, string>> {
  await ctx.sessions.recordClient(session, request.clientId);
  return ctx.grants.authorize(request, session);
}

export async function finishWithError(
  ctx: InteractionDeps,
  res: Response,
  interactionId: string,
  request: AuthorizationRequest,
  error: RedirectError,
  status: 302 | 303,
): Promise<void> {
  await ctx.interactions.finish(interactionId);
  respondWithError(
    res,
    { redirectUri: request.redirectUri, responseMode: request.responseMode, state: request.state },
    error,
    ctx.config.issuer,
    status,
  );
}

/**
 * The authorization flow bound to its services once, in the composition root: /authorize begins it;
 * a route that starts it needs none of the services behind it.
 */
export interface AuthorizationFlow {
  begin(
    req: Request,
    res: Response,
    request: AuthorizationRequest,
    session: Session | null,
    addressOf: () => string,
  ): Promise<void>;
}

export const authorizationFlow = (deps: BeginDeps): AuthorizationFlow => ({
  begin: (req, res, request, session, addressOf) => begin(deps, req, res, request, session, addressOf),
});
