import type { Request, RequestHandler, Response, Router } from 'express';
import type Joi from 'joi';
import cookieParser from 'cookie-parser';
import { endpoint, formBody } from '@attest/common';
import { exchangeCode, newSignIn, portalUris, PortalSignInError } from '../portal/portal-client';
import { frameOf, portalLocals, requirePortalCsrf, requirePortalSession } from '../portal/portal-guard';
import { currentPortalSession, endPortalSession, loginCookie, startPortalSession } from '../portal/portal-session';
import { appsPage, portalLandingPage, portalSignedOutPage } from '../views/portal-pages';
import type { IdentityContext } from './context';
import { checkedValue } from './form-check';
import { PORTAL_CALLBACK_QUERY, PORTAL_FORMS } from './form-schemas';
import { pageErrors } from './page-errors';
import { portalAppRoutes } from './portal-apps-route';
import { portalDocs } from './portal-document';
import { portalKeyRoutes } from './portal-keys-route';
import { portalPaymentRoutes } from './portal-payments-route';
import { portalWebhookRoutes } from './portal-webhooks-route';
import { requireFormContentType } from './steps';

interface PendingSignIn {
  verifier: string;
  nonce: string;
}
const PENDING_TTL_MS = 600000;
const pendingKey = (state: string) => `portal:signin:${state}`;

/** Notices after a change (Post/Redirect/Get): a fixed list, nothing from the URL is reflected. */
export const PORTAL_NOTICES: Record<string, string> = {
  saved: 'Settings saved.',
  'member-saved': 'Team changed.',
  'member-removed': 'Member removed.',
  'key-revoked': 'API key revoked: it stops working at once.',
  disabled: 'App disabled.',
  'webhook-saved': 'Endpoint saved.',
  'webhook-removed': 'Endpoint removed, with its delivery log.',
  'webhook-enabled': 'Endpoint enabled: events are sent to it again.',
  'webhook-disabled': 'Endpoint disabled: nothing is sent to it.',
  'test-sent': 'Test event queued: its delivery is in the log below (reload to see how it went).',
  redelivered: 'Delivery queued again: reload to see how it went.',
  enabled: 'App enabled.',
};
export const noticeOf = (req: Request) => {
  const n = typeof req.query.notice === 'string' ? req.query.notice : '';
  return Object.hasOwn(PORTAL_NOTICES, n) ? PORTAL_NOTICES[n] : undefined;
};

/**
 * The developer portal (issue 27): people sign in to it with this provider itself (the portal is an app:
 * /authorize with PKCE, the code exchanged at /token), then see and run the apps they belong to.
 */
export function portalRoutes(router: Router, ctx: IdentityContext): void {
  const session = requirePortalSession(ctx);
  /** The steps of a portal form: the session, a form body, its CSRF token. */
  const form: PortalForm = (schema) => [
    cookieParser(),
    session,
    requireFormContentType,
    formBody(ctx.config.BODY_LIMIT),
    requirePortalCsrf(ctx, schema),
  ];

  const home = async (req: Request, res: Response) => {
    const signed = await currentPortalSession(ctx, req);
    if (!signed) return portalLandingPage(res);
    res.locals.portal = { session: signed };
    const memberships = await ctx.teams.appsOf(signed.user.id);
    const apps = (
      await Promise.all(memberships.map(async (m) => ({ app: await ctx.apps.find(m.appId), role: m.role })))
    ).flatMap((m) => (m.app ? [{ app: m.app, role: m.role }] : []));
    appsPage(res, frameOf(ctx, req, res, { notice: noticeOf(req) }), {
      apps,
      selfService: ctx.config.portal.selfServiceApps,
    });
  };

  const signIn = async (_req: Request, res: Response) => {
    const s = newSignIn();
    await ctx.cache.set(pendingKey(s.state), JSON.stringify({ verifier: s.verifier, nonce: s.nonce }), PENDING_TTL_MS);
    loginCookie.set(ctx, res, s.state);
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: ctx.portalClientId,
      redirect_uri: portalUris(ctx.config.issuer).redirectUri,
      scope: 'openid',
      state: s.state,
      nonce: s.nonce,
      code_challenge: s.challenge,
      code_challenge_method: 'S256',
    });
    res.set('Cache-Control', 'no-store').redirect(302, `/authorize?${query.toString()}`);
  };

  const callback = async (req: Request, res: Response) => {
    const fail = (why: string) => {
      ctx.logger.info('portal sign-in failed', { reason: why });
      portalLandingPage(res, { error: `The sign-in did not complete (${why}). Try again.` });
    };
    const [state, code, error] = ['state', 'code', 'error'].map((n) =>
      checkedValue(PORTAL_CALLBACK_QUERY, req.query, n),
    );
    const expected = loginCookie.get(ctx, req);
    loginCookie.clear(ctx, res);
    if (!state || !expected || state !== expected) return fail('this browser did not start it');
    const raw = await ctx.cache.take(pendingKey(state));
    if (!raw) return fail('it took too long');
    if (error || !code) return fail(error ?? 'no code');
    const pending = JSON.parse(raw) as PendingSignIn;
    let sub: string;
    let idToken: string;
    try {
      ({ sub, idToken } = await exchangeCode(ctx, code, pending.verifier, pending.nonce, ctx.portalFetch));
    } catch (err) {
      if (err instanceof PortalSignInError) return fail(err.message);
      throw err;
    }
    const userId = await ctx.subjects.userIdFor(ctx.portalClientId, sub);
    if (!userId) return fail('unknown person');
    await startPortalSession(ctx, res, { userId, idToken });
    res.redirect(303, '/portal');
  };

  /** Ends the portal session, then the Attest session through RP-Initiated Logout (/logout with the id_token). */
  const signOut = async (_req: Request, res: Response) => {
    const { session: s } = portalLocals(res);
    await endPortalSession(ctx, res, s);
    const query = new URLSearchParams({
      id_token_hint: s.idToken,
      post_logout_redirect_uri: portalUris(ctx.config.issuer).postLogoutRedirectUri,
    });
    res.redirect(303, `/logout?${query.toString()}`);
  };

  endpoint(router, '/portal', { GET: [cookieParser(), home] }, portalDocs.home);
  endpoint(router, '/portal/signin', { GET: [signIn] }, portalDocs.signin);
  endpoint(router, '/portal/callback', { GET: [cookieParser(), callback] }, portalDocs.callback);
  endpoint(router, '/portal/signout', { POST: [...form(PORTAL_FORMS.signOut), signOut] }, portalDocs.signOut);
  endpoint(router, '/portal/signed-out', { GET: [(_req, res) => portalSignedOutPage(res)] }, portalDocs.signedOut);
  portalAppRoutes(router, ctx, form);
  portalKeyRoutes(router, ctx, form);
  portalWebhookRoutes(router, ctx, form);
  portalPaymentRoutes(router, ctx, form);
  router.use('/portal', pageErrors);
}

/** The steps of a portal form (session, body, CSRF), for its schema. */
export type PortalForm = (schema: Joi.ObjectSchema) => RequestHandler[];
