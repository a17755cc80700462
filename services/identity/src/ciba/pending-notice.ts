import type { NextFunction, Request, Response } from 'express';
import cookieParser from 'cookie-parser';
import { currentSession, type SessionReader } from '../kernel/session-cookie';
import { html, PAGE_NOTICE } from '../kernel/html';
import type { BackchannelRequests } from './backchannel-requests';

/** What the notice of pending approvals reads: the browser's session, and the count of the person's requests. */
export type PendingNoticeDeps = SessionReader & { ciba: Pick<BackchannelRequests, 'countPending'> };

const parseCookies = cookieParser();

/**
 * On a page a signed-in person opens (the account page, the sign-in and consent pages: mounted on those paths
 * in app.ts), a notice at the top when backchannel requests wait for their approval, linking to them on the
 * account page (issue 42). A browser without a session costs nothing more than its cookie's read.
 */
export function pendingApprovalsNotice(ctx: PendingNoticeDeps) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET') return next();
    parseCookies(req, res, () => {
      void (async () => {
        const current = await currentSession(ctx, req);
        const count = current ? await ctx.ciba.countPending(current.session.userId) : 0;
        if (count > 0)
          res.locals[PAGE_NOTICE] = html`<p class="notice" role="status" id="pending-approvals">${
            count === 1 ? 'An app asks you to approve an action' : `Apps ask you to approve ${count} actions`
          }: <a href="/account#approvals">see and decide on your account page</a>.</p>`;
      })().then(() => next(), next);
    });
  };
}
