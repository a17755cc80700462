import type { Request, Response, Router } from 'express';
import cookieParser from 'cookie-parser';
import { endpoint, formBody } from '@attest/common';
import { exchangeCode, newSignIn, portalUris, PortalSignInError } from './portal-client';
import { frameOf, portalLocals, requirePortalCsrf, requirePortalSession } from './portal-guard';
import { currentPortalSession, endPortalSession, loginCookie, startPortalSession } from './portal-session';
import { appsPage, portalLandingPage, portalSignedOutPage } from './portal-pages';
import { checkedValue } from '../kernel/form-check';
import { PORTAL_CALLBACK_QUERY, PORTAL_FORMS } from './portal-forms';
import { usePageErrors } from '../kernel/page-errors';
import { portalAppRoutes } from './portal-apps-route';
import { portalSignInDocs as docs } from './portal-route.openapi';
import type { PortalDeps } from './portal-deps';
import { portalAddressRoutes } from './portal-addresses-route';
import { portalPolicyRoutes } from './portal-policy-route';
import { portalKeyRoutes } from './portal-keys-route';
import { portalPaymentRoutes } from './portal-payments-route';
import { portalWebhookRoutes } from './portal-webhooks-route';
import { noticeOf, type PortalForm } from './portal-notice';
import { requireFormContentType } from '../kernel/http-steps';

interface PendingSignIn {
  verifier: string;
  nonce: string;
}
const PENDING_TTL_MS = 600000;
const pendingKey = (state: string) => `portal:signin:${state}`;

/**
 * The developer portal (issue 27): people sign in to it with this provider itself (the portal is an app:
 * /authorize with PKCE, the code exchanged at /token), then see and run the apps they belong to.
 */
export function portalRoutes(router: Router, deps: PortalDeps): void {
  const { config, logger, cache, portal } = deps;
  const session = requirePortalSession(deps);
  /** The steps of a portal form: the session, a form body, its CSRF token. */
  const form: PortalForm = (schema) => [
    cookieParser(),
    session,
    requireFormContentType,
    formBody(config.BODY_LIMIT),
    requirePortalCsrf(deps, schema),
  ];

  const home = async (req: Request, res: Response) => {
    const signed = await currentPortalSession(deps, req);
    if (!signed) return portalLandingPage(res);
    res.locals.portal = { session: signed };
    const memberships = await deps.teams.appsOf(signed.user.id);
    const apps = (
      await Promise.all(memberships.map(async (m) => ({ app: await deps.apps.find(m.appId), role: m.role })))
    ).flatMap((m) => (m.app ? [{ app: m.app, role: m.role }] : []));
    appsPage(res, frameOf(deps, req, res, { notice: noticeOf(req) }), {
      apps,
      selfService: config.portal.selfServiceApps,
    });
  };

  const signIn = async (_req: Request, res: Response) => {
    const s = newSignIn();
    await cache.set(pendingKey(s.state), JSON.stringify({ verifier: s.verifier, nonce: s.nonce }), PENDING_TTL_MS);
    loginCookie.set(deps, res, s.state);
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: portal.clientId,
      redirect_uri: portalUris(config.issuer).redirectUri,
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
      logger.info('portal sign-in failed', { reason: why });
      portalLandingPage(res, { error: `The sign-in did not complete (${why}). Try again.` });
    };
    const [state, code, error] = ['state', 'code', 'error'].map((n) =>
      checkedValue(PORTAL_CALLBACK_QUERY, req.query, n),
    );
    const expected = loginCookie.get(deps, req);
    loginCookie.clear(deps, res);
    if (!state || !expected || state !== expected) return fail('this browser did not start it');
    const raw = await cache.take(pendingKey(state));
    if (!raw) return fail('it took too long');
    if (error || !code) return fail(error ?? 'no code');
    const pending = JSON.parse(raw) as PendingSignIn;
    let sub: string;
    let idToken: string;
    try {
      ({ sub, idToken } = await exchangeCode(
        { config, keys: deps.keys, clientId: portal.clientId, fetch: portal.fetch },
        code,
        pending.verifier,
        pending.nonce,
      ));
    } catch (err) {
      if (err instanceof PortalSignInError) return fail(err.message);
      throw err;
    }
    const userId = await deps.subjects.userIdFor(portal.clientId, sub);
    if (!userId) return fail('unknown person');
    await startPortalSession(deps, res, { userId, idToken });
    res.redirect(303, '/portal');
  };

  /** Ends the portal session, then the Attest session through RP-Initiated Logout (/logout with the id_token). */
  const signOut = async (_req: Request, res: Response) => {
    const { session: s } = portalLocals(res);
    await endPortalSession(deps, res, s);
    const query = new URLSearchParams({
      id_token_hint: s.idToken,
      post_logout_redirect_uri: portalUris(config.issuer).postLogoutRedirectUri,
    });
    res.redirect(303, `/logout?${query.toString()}`);
  };

  endpoint(router, '/portal', { GET: [cookieParser(), home] }, docs.home);
  endpoint(router, '/portal/signin', { GET: [signIn] }, docs.signin);
  endpoint(router, '/portal/callback', { GET: [cookieParser(), callback] }, docs.callback);
  endpoint(router, '/portal/signout', { POST: [...form(PORTAL_FORMS.signOut), signOut] }, docs.signOut);
  endpoint(router, '/portal/signed-out', { GET: [(_req, res) => portalSignedOutPage(res)] }, docs.signedOut);
  const { apps, audit, teams } = deps;
  const { transactionsAdmin, insight } = portal;
  portalAppRoutes(router, { config, logger, apps, audit, teams, transactionsAdmin, insight }, form);
  portalKeyRoutes(router, { config, logger, apps, audit, teams, transactionsAdmin }, form);
  portalWebhookRoutes(router, { config, logger, apps, audit, teams, transactionsAdmin }, form);
  portalPaymentRoutes(router, { config, logger, apps, teams, transactionsAdmin }, form);
  portalAddressRoutes(router, { config, logger, apps, audit, teams, transactionsAdmin }, form);
  portalPolicyRoutes(router, { config, logger, apps, audit, teams, transactionsAdmin }, form);
  usePageErrors(router, '/portal');
}
