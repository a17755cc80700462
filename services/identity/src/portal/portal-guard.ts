import type { NextFunction, Request, Response } from 'express';
import type Joi from 'joi';
import { requestActor, type AuditActor } from '@attest/common';
import { roleAllows } from '../kernel/teams';
import { csrfToken, csrfValid } from '../kernel/csrf';
import { checkedValue } from '../kernel/form-check';
import type { App } from '../kernel/app-store';
import type { MemberRole } from '../kernel/member-store';
import { portalErrorPage, type PortalFrame } from './portal-pages';
import { currentPortalSession, type PortalSession } from './portal-session';
import type { PortalDeps, PortalGuardDeps } from './portal-deps';

export interface PortalLocals {
  session: PortalSession;
  app?: App;
  role?: MemberRole;
}
export const portalLocals = (res: Response) => res.locals.portal as PortalLocals;

/** The page frame of the signed-in person: their name and the CSRF token of their portal session. */
export const frameOf = (
  deps: Pick<PortalDeps, 'config'>,
  req: Request,
  res: Response,
  extra: Pick<PortalFrame, 'notice' | 'error'> = {},
): PortalFrame => {
  const { session } = portalLocals(res);
  return { username: session.user.username, csrf: csrfToken(deps, req, res, `portal:${session.id}`), ...extra };
};

/** Who acted, for the audit trail: the person (user id), with their username and "via portal" in the detail. */
export const portalActor = (req: Request, res: Response): { actor: AuditActor; detail: Record<string, unknown> } => {
  const { user } = portalLocals(res).session;
  return { actor: requestActor(req, 'user', user.id), detail: { via: 'portal', username: user.username } };
};

/** A portal session, or: GET → /portal (the sign-in page), POST → 303 there. */
export const requirePortalSession =
  (deps: Pick<PortalDeps, 'config' | 'cache' | 'users'>) => async (req: Request, res: Response, next: NextFunction) => {
    const session = await currentPortalSession(deps, req);
    if (!session) return res.redirect(req.method === 'GET' ? 302 : 303, '/portal');
    res.locals.portal = { session } satisfies PortalLocals;
    next();
  };

/** The form's CSRF token, bound to the portal session, before anything else of the form is looked at. */
export const requirePortalCsrf =
  (deps: Pick<PortalDeps, 'config'>, schema: Joi.ObjectSchema) => (req: Request, res: Response, next: NextFunction) => {
    const presented = checkedValue(schema, req.body, 'csrf');
    if (csrfValid(deps, req, `portal:${portalLocals(res).session.id}`, presented)) return next();
    portalErrorPage(res, 403, null, 'This form could not be verified', 'Go back, reload the page and try again.');
  };

/**
 * The app of the path, for a member whose role allows `needed` — checked here, on the server, for every
 * request. Not a member (or no such app): 404, the same either way, so nothing of other apps shows.
 */
export const requireRole =
  (deps: PortalGuardDeps, needed: MemberRole) => async (req: Request, res: Response, next: NextFunction) => {
    const locals = portalLocals(res);
    const appId = String(req.params.id);
    const role = /^app_[0-9a-f]{32}$/.test(appId) ? await deps.teams.roleOf(appId, locals.session.user.id) : null;
    const app = role ? await deps.apps.find(appId) : null;
    if (!role || !app)
      return portalErrorPage(
        res,
        404,
        frameOf(deps, req, res),
        'No such app',
        'There is no app here that you belong to.',
      );
    if (!roleAllows(role, needed)) {
      deps.logger.info('portal action refused', { app_id: appId, user_id: locals.session.user.id, role, needed });
      return portalErrorPage(
        res,
        403,
        frameOf(deps, req, res),
        'Not allowed',
        `Your role on ${app.name} is ${role}: this needs ${needed === 'owner' ? 'an owner' : 'a developer or an owner'}.`,
      );
    }
    locals.app = app;
    locals.role = role;
    next();
  };
