import type { Request, Response, Router } from 'express';
import cookieParser from 'cookie-parser';
import { endpoint, failureFields, formBody, refusalFields, requestActor } from '@attest/common';
import { csrfToken, csrfValid } from '../kernel/csrf';
import { addressKeys } from '../kernel/failure-limits';
import { checkedValue, firstFailure } from '../kernel/form-check';
import { requireFormContentType } from '../kernel/http-steps';
import { usePageErrors } from '../kernel/page-errors';
import { askedScopes, errorPage } from '../kernel/pages';
import type { KernelServices, TokenServices } from '../kernel/services';
import { currentSession } from '../kernel/session-cookie';
import type { Session } from '../kernel/sessions';
import type { DeviceFlow } from './device-flow';
import { DEVICE_FORM, DEVICE_QUERY } from './device-forms';
import { approvalPage, decidedPage, enterCodePage, unmetLevelPage } from './device-page';
import type { DeviceAuthorization } from './device-store';
import { deviceDocs } from './device-route.openapi';

/** What /device uses: the person's session, the app asking, the wrong-code limit, the device flow. */
export type DeviceRouteDeps = Pick<KernelServices, 'apps' | 'config' | 'limits' | 'users'> &
  Pick<TokenServices, 'sessions'> & { device: Pick<DeviceFlow, 'pending' | 'unmetLevel' | 'approve' | 'deny'> };

const TOO_MANY = 'Too many wrong codes from this address. Wait a few minutes and try again.';
const UNKNOWN =
  'This code is not valid. Check the code your device shows; if it has expired, start again on the device.';
const CSRF_PURPOSE = 'device';

type Pending = DeviceAuthorization & { userCode: string };

/** Where the person signs in and comes back to this code. */
const signInUrl = (userCode: string) => `/signin?${new URLSearchParams({ next: 'device', user_code: userCode })}`;
const codeUrl = (userCode: string) => `/device?${new URLSearchParams({ user_code: userCode })}`;

/**
 * GET|POST /device (RFC 8628 §3.3): the person types the user code (wrong codes are limited per address),
 * signs in (the sign-in pages, `next=device`), sees which client asks for what on which resource, and
 * approves or denies. A verification level the request, app or resource demands is checked as at
 * /authorize; a person below it may sign in with another account.
 */
export function deviceRoute(router: Router, ctx: DeviceRouteDeps): void {
  /** The authorization a typed code names, counted against the address's limit; null after answering. */
  const lookUp = async (req: Request, res: Response, typed: string, csrf: string): Promise<Pending | null> => {
    const admission = await ctx.limits.userCodes.reserve(addressKeys(req, 'per-address-user-codes'));
    if (admission.refused) {
      enterCodePage(res, { csrf, userCode: typed, error: TOO_MANY }, 429, refusalFields(admission.refused));
      return null;
    }
    const found = await ctx.device.pending(typed);
    if (!found) {
      const count = await admission.attempt.failed();
      enterCodePage(res, { csrf, userCode: typed, error: UNKNOWN }, 400, failureFields(count));
      return null;
    }
    await admission.attempt.succeeded();
    return found;
  };

  /** Signed in, a code found: the approval page, or why this person cannot approve. */
  const decisionPage = async (res: Response, found: Pending, session: Session, csrf: string) => {
    const [app, user] = await Promise.all([ctx.apps.find(found.clientId), ctx.users.findById(session.userId)]);
    if (!app || app.disabledAt || !user) return enterCodePage(res, { csrf, error: UNKNOWN }, 400);
    const unmet = ctx.device.unmetLevel(found, user);
    if (unmet)
      return unmetLevelPage(res, {
        csrf,
        userCode: found.userCode,
        appName: app.name,
        wanted: unmet.wanted,
        has: unmet.has,
        switchUrl: signInUrl(found.userCode),
      });
    const { request } = found;
    approvalPage(res, {
      csrf,
      userCode: found.userCode,
      client: { id: app.id, name: app.name, registration: app.registration },
      // each scope asked: OpenID Connect's, the resource's, offline access
      scopes: askedScopes(request),
      resource: request.resource && (request.resourceName ?? request.resource.uri),
      username: user.username,
      switchUrl: signInUrl(found.userCode),
    });
  };

  const show = async (req: Request, res: Response) => {
    const csrf = csrfToken(ctx, req, res, CSRF_PURPOSE);
    const typed = firstFailure(DEVICE_QUERY, req.query)
      ? undefined
      : checkedValue(DEVICE_QUERY, req.query, 'user_code');
    if (!typed) return enterCodePage(res, { csrf });
    const current = await currentSession(ctx, req);
    // verification_uri_complete: the code is pre-filled, and the person still confirms it
    if (!current) return enterCodePage(res, { csrf, userCode: typed });
    const found = await lookUp(req, res, typed, csrf);
    if (found) await decisionPage(res, found, current.session, csrf);
  };

  const submit = async (req: Request, res: Response) => {
    const body = req.body as Record<string, unknown>;
    const csrf = checkedValue(DEVICE_FORM, body, 'csrf');
    if (!csrf || !csrfValid(ctx, req, CSRF_PURPOSE, csrf))
      return errorPage(res, 403, {
        code: 'invalid_csrf',
        detail: 'The form could not be verified. Go back and try again.',
        attribute: 'csrf',
      });
    const failure = firstFailure(DEVICE_FORM, body, ['user_code', 'decision']);
    if (failure)
      return errorPage(res, 400, {
        code: failure.problem === 'missing' ? 'required' : 'invalid_parameter',
        detail: failure.name === 'decision' ? 'decision must be confirm, approve or deny.' : 'Enter the code.',
        attribute: failure.name,
      });
    const found = await lookUp(req, res, body.user_code as string, csrf);
    if (!found) return;
    const current = await currentSession(ctx, req);
    if (!current) return res.redirect(303, signInUrl(found.userCode));
    const decision = (body.decision as string | undefined) ?? 'confirm';
    if (decision === 'confirm') return res.redirect(303, codeUrl(found.userCode));
    const { session } = current;
    const actor = requestActor(req, 'user', session.userId);
    const app = await ctx.apps.find(found.clientId);
    const appName = app?.name ?? found.clientId;
    if (decision === 'deny') {
      if (!(await ctx.device.deny(found, session.userId, actor)))
        return enterCodePage(res, { csrf: csrfToken(ctx, req, res, CSRF_PURPOSE), error: UNKNOWN }, 400);
      return decidedPage(res, false, appName);
    }
    const user = await ctx.users.findById(session.userId);
    if (!app || app.disabledAt || !user || ctx.device.unmetLevel(found, user))
      return decisionPage(res, found, session, csrf);
    if (!(await ctx.device.approve(found, app, { user, session }, actor)))
      return enterCodePage(res, { csrf, error: UNKNOWN }, 400);
    decidedPage(res, true, appName);
  };

  endpoint(
    router,
    '/device',
    {
      GET: [cookieParser(), show],
      POST: [cookieParser(), requireFormContentType, formBody(ctx.config.BODY_LIMIT), submit],
    },
    deviceDocs,
  );
  usePageErrors(router, '/device');
}
