import type { NextFunction, Request, Response, Router } from 'express';
import cookieParser from 'cookie-parser';
import type Joi from 'joi';
import { endpoint, failureFields, formBody, refusalFields } from '@attest/common';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { hashPassword, verifyPassword } from '../kernel/crypto';
import { parseCredential, passkeyMessage, recordAccountEvent, type Passkeys } from '../signin';
import { commonPasswordMessage, isCommonPassword } from '../kernel/passwords';
import type { Session } from '../kernel/sessions';
import type { User } from '../kernel/user-store';
import { accountPage } from './account-page';
import { sendPage, type Html } from '../kernel/html';
import { errorPage } from '../kernel/pages';
import type { KernelServices, TokenServices } from '../kernel/services';
import { checkedValue } from '../kernel/form-check';
import { ACCOUNT_FORMS, ACCOUNT_QUERY } from './account-forms';
import { csrfToken, csrfValid } from '../kernel/csrf';
import { signInKeys } from '../kernel/failure-limits';
import { usePageErrors } from '../kernel/page-errors';
import { clearSessionCookie, currentSession } from '../kernel/session-cookie';
import { requireFormContentType } from '../kernel/http-steps';
import { accountDocs, accountFormDocs } from './account-route.openapi';
import type { AccountSection } from '../kernel/account-section';

export { ACCOUNT_FORMS, ACCOUNT_QUERY };

/** Notices after a change (Post/Redirect/Get): a fixed list, so nothing from the URL is reflected. */
const NOTICES: Record<string, string> = {
  withdrawn: 'Access withdrawn. The app must ask you again.',
  'passkey-added': 'Passkey added.',
  'passkey-removed': 'Passkey removed.',
  'password-changed': 'Password changed.',
  'session-ended': 'Session ended: that browser is signed out.',
  'sessions-ended': 'Your other sessions ended: only this browser is signed in.',
};

/**
 * Adding or removing a passkey needs a sign-in this recent (else the user signs in again, with a password
 * or a passkey, at /signin?next=account); a password change needs the current password instead.
 */
const reauthNeeded = (window: string) =>
  `For your security, sign in again before changing your passkeys: your last sign-in was more than ${window} ago.`;

/** ACCOUNT_REAUTH_SECONDS in words: "5 minutes", "1 minute", "90 seconds". */
export function reauthWindow(seconds: number): string {
  if (seconds % 60 !== 0) return `${seconds} seconds`;
  const minutes = seconds / 60;
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

interface Signed {
  /** The server-side session this browser is signed in with (its public id is the CSRF purpose). */
  session: Session;
  user: User;
}
const signed = (res: Response) => res.locals.account as Signed;

/** The account page and its forms: approved apps (withdraw), sessions (end), passkeys (add, remove), password change. */
/** What /account uses: the session, the user, their consents and passkeys, the audit trail, the limits. */
export type AccountRouteDeps = Pick<KernelServices, 'audit' | 'config' | 'consents' | 'limits' | 'logger' | 'users'> &
  Pick<TokenServices, 'sessions'> & {
    passkeys: Passkeys;
    /** Panels other features add at the top of the page (issue 42: approvals waiting), bound in app.ts. */
    panels?: AccountPanel[];
    /** Sections other features add after the approved apps (issue 42: agents acting for you), with their forms. */
    sections?: AccountSection[];
  };

/** A panel at the top of the account page another feature renders: for this request, person, session and CSRF token. */
export type AccountPanel = (input: { req: Request; user: User; sessionId: string; csrf: string }) => Promise<Html | ''>;

export function accountRoute(router: Router, ctx: AccountRouteDeps): void {
  const recentSeconds = ctx.config.ACCOUNT_REAUTH_SECONDS;
  const window = reauthWindow(recentSeconds);
  const csrfOf = (req: Request, res: Response) => csrfToken(ctx, req, res, `account:${signed(res).session.id}`);
  const sections = ctx.sections ?? [];
  const notices: Record<string, string> = Object.assign({}, ...sections.map((s) => s.notices), NOTICES);

  /** A signed-in user, or: GET → the sign-in page (then back here); POST → 303 there too. */
  const requireSession = async (req: Request, res: Response, next: NextFunction) => {
    const current = await currentSession(ctx, req);
    const user = current ? await ctx.users.findById(current.session.userId) : null;
    if (!current || !user) return res.redirect(req.method === 'GET' ? 302 : 303, '/signin?next=account');
    res.locals.account = { session: current.session, user } satisfies Signed;
    next();
  };

  /** The form's CSRF token (its schema's `csrf`), before any other field is looked at. */
  const requireCsrf = (schema: Joi.ObjectSchema) => (req: Request, res: Response, next: NextFunction) => {
    const presented = checkedValue(schema, req.body, 'csrf');
    if (csrfValid(ctx, req, `account:${signed(res).session.id}`, presented)) return next();
    errorPage(res, 403, {
      code: 'invalid_csrf',
      detail: 'The form could not be verified. Go back and try again.',
      attribute: 'csrf',
    });
  };

  const render = async (
    req: Request,
    res: Response,
    extra: { notice?: string; error?: string } = {},
    status = 200,
    headers: Record<string, string> = {},
  ) => {
    const { user } = signed(res);
    const csrf = csrfOf(req, res);
    const sessionId = signed(res).session.id;
    const [consents, passkeys, addPasskey, sessions, panels, added] = await Promise.all([
      ctx.consents.listForUser(user.id),
      ctx.passkeys.listForUser(user.id),
      ctx.passkeys.registrationOptions('add', csrf, { userId: user.id, username: user.username, name: user.name }),
      ctx.sessions.listForUser(user.id),
      Promise.all((ctx.panels ?? []).map((panel) => panel({ req, user, sessionId, csrf }))),
      Promise.all(sections.map((s) => s.render(user.id, csrf))),
    ]);
    const current = signed(res).session.id;
    const listed = sessions.map((s) => ({
      id: s.id,
      device: s.device,
      amr: s.amr,
      createdAt: s.createdAt,
      lastSeenAt: s.lastSeenAt,
      current: s.id === current,
    }));
    const reauth = ctx.sessions.authenticatedWithin(signed(res).session, recentSeconds) ? undefined : window;
    accountPage(
      res.set(headers),
      { csrf, user, consents, passkeys, addPasskey, sessions: listed, reauth, panels, sections: added, ...extra },
      status,
    );
  };

  const show = (req: Request, res: Response) => {
    const notice = checkedValue(ACCOUNT_QUERY, req.query, 'notice');
    return render(req, res, { notice: notice && Object.hasOwn(notices, notice) ? notices[notice] : undefined });
  };
  const done = (res: Response, notice: string) => res.redirect(303, `/account?notice=${encodeURIComponent(notice)}`);
  /**
   * A field of the form, checked with the form's schema: one that fails it (absent, empty, repeated, too
   * short or long) reads as empty, which each form answers as before (no such app, session or passkey).
   */
  const field = (req: Request, schema: Joi.ObjectSchema, name: string): string =>
    checkedValue(schema, req.body, name) ?? '';

  const withdraw = async (req: Request, res: Response) => {
    const { user } = signed(res);
    const appId = field(req, ACCOUNT_FORMS.withdrawConsent, 'app_id');
    if (!(await ctx.consents.withdraw(user.id, appId)))
      return render(req, res, { error: 'That app has no access to withdraw.' }, 404);
    ctx.logger.info('consent withdrawn by the user', { user_id: user.id, app_id: appId });
    await recordAccountEvent(ctx, req, user.id, 'consent.withdrawn', { app_id: appId });
    done(res, 'withdrawn');
  };

  /** A stolen session alone cannot change how the account signs in: a recent sign-in is needed. */
  const recentlyAuthenticated = async (req: Request, res: Response): Promise<boolean> => {
    if (ctx.sessions.authenticatedWithin(signed(res).session, recentSeconds)) return true;
    await render(req, res, { error: reauthNeeded(window) }, 403);
    return false;
  };

  const addPasskey = async (req: Request, res: Response) => {
    const { user } = signed(res);
    if (!(await recentlyAuthenticated(req, res))) return;
    const name =
      field(req, ACCOUNT_FORMS.addPasskey, 'name').trim().slice(0, 100) ||
      `Passkey added ${new Date().toISOString().slice(0, 10)}`;
    const credential = parseCredential<RegistrationResponseJSON>(field(req, ACCOUNT_FORMS.addPasskey, 'credential'));
    const result = await ctx.passkeys.register(
      'add',
      field(req, ACCOUNT_FORMS.addPasskey, 'ceremony'),
      field(req, ACCOUNT_FORMS.addPasskey, 'csrf'),
      credential,
      name,
      async (account, passkey) =>
        account.userId === user.id && (await ctx.passkeys.insert(passkey)) ? null : 'already_registered',
      { userId: user.id, username: user.username, name: user.name },
    );
    if (!result.ok)
      return render(
        req,
        res,
        { error: passkeyMessage(result.failure) },
        result.failure === 'already_registered' ? 409 : 400,
      );
    await recordAccountEvent(ctx, req, user.id, 'passkey.added', { name, user_verified: result.value.userVerified });
    done(res, 'passkey-added');
  };

  const removePasskey = async (req: Request, res: Response) => {
    const { user } = signed(res);
    if (!(await recentlyAuthenticated(req, res))) return;
    const id = field(req, ACCOUNT_FORMS.removePasskey, 'passkey_id');
    // "never the last credential" is decided inside the write (two removals at once cannot both pass)
    const removed = id ? await ctx.passkeys.removeUnlessLast(user.id, id) : 'not_found';
    if (removed === 'not_found') return render(req, res, { error: 'No such passkey on your account.' }, 404);
    if (removed === 'last_credential') {
      return render(
        req,
        res,
        { error: 'This is your only passkey and your account has no password: add another passkey first.' },
        409,
      );
    }
    await recordAccountEvent(ctx, req, user.id, 'passkey.removed', { passkey_id: id });
    done(res, 'passkey-removed');
  };

  /** Ends one of the user's sessions (back-channel logout included); ending this browser's is a sign-out. */
  const endSession = async (req: Request, res: Response) => {
    const { user, session } = signed(res);
    const id = field(req, ACCOUNT_FORMS.endSession, 'session_id');
    if (!(await ctx.sessions.end(user.id, id)))
      return render(req, res, { error: 'That session has already ended.' }, 404);
    ctx.logger.info('session ended', { user_id: user.id, by: 'user' });
    await recordAccountEvent(ctx, req, user.id, 'session.ended', { session_id: id, current: id === session.id });
    if (id !== session.id) return done(res, 'session-ended');
    clearSessionCookie(ctx, res);
    res.redirect(303, '/signin?next=account');
  };

  const endOtherSessions = async (req: Request, res: Response) => {
    const { user, session } = signed(res);
    const ended = await ctx.sessions.endAll(user.id, session.id);
    ctx.logger.info('sessions ended', { user_id: user.id, count: ended, by: 'user' });
    await recordAccountEvent(ctx, req, user.id, 'session.ended', { others: true, count: ended });
    done(res, 'sessions-ended');
  };

  const changePassword = async (req: Request, res: Response) => {
    const { user, session } = signed(res);
    if (!user.passwordHash)
      return render(req, res, { error: 'Your account has no password; you sign in with passkeys.' }, 400);
    const [current, next, confirm] = ['current_password', 'new_password', 'confirm_password'].map((name) =>
      field(req, ACCOUNT_FORMS.changePassword, name),
    );
    // a slot is taken in the shared store before the password is hashed (as at /signin)
    const admission = await ctx.limits.signIn.reserve(signInKeys(req, user.username));
    if (admission.refused)
      return render(
        req,
        res,
        { error: 'Too many failed attempts. Wait a few minutes and try again.' },
        429,
        refusalFields(admission.refused),
      );
    if (!current || !(await verifyPassword(current, user.passwordHash))) {
      const count = await admission.attempt.failed();
      return render(req, res, { error: 'Your current password is wrong.' }, 400, failureFields(count));
    }
    await admission.attempt.succeeded(['per-user-and-address']);
    // empty when it is not 8 to 1024 characters (the schema's rule)
    if (!next) return render(req, res, { error: 'The new password must be 8 to 1024 characters.' }, 400);
    if (next !== confirm) return render(req, res, { error: 'The two new passwords differ.' }, 400);
    if (await isCommonPassword(next))
      return render(req, res, { error: commonPasswordMessage('The new password') }, 400);
    await ctx.users.setPasswordHash(user.id, await hashPassword(next, ctx.config.PASSWORD_HASH_COST));
    // whoever else is signed in (perhaps with the old password) is signed out, and their tokens stop working
    const ended = await ctx.sessions.endAll(user.id, session.id);
    ctx.logger.info('password changed by the user', { user_id: user.id, other_sessions_ended: ended });
    await recordAccountEvent(ctx, req, user.id, 'password.changed', { other_sessions_ended: ended });
    done(res, 'password-changed');
  };

  const form = (schema: Joi.ObjectSchema) => [
    cookieParser(),
    requireSession,
    requireFormContentType,
    formBody(ctx.config.BODY_LIMIT),
    requireCsrf(schema),
  ];
  endpoint(router, '/account', { GET: [cookieParser(), requireSession, show] }, accountDocs);
  const forms = ACCOUNT_FORMS;
  const post = (path: string, name: keyof typeof ACCOUNT_FORMS, handler: (req: Request, res: Response) => unknown) =>
    endpoint(router, path, { POST: [...form(forms[name]), handler] }, accountFormDocs[name]);
  post('/account/consents/withdraw', 'withdrawConsent', withdraw);
  post('/account/passkeys', 'addPasskey', addPasskey);
  post('/account/passkeys/remove', 'removePasskey', removePasskey);
  post('/account/password', 'changePassword', changePassword);
  post('/account/sessions/end', 'endSession', endSession);
  post('/account/sessions/end-others', 'endOtherSessions', endOtherSessions);
  for (const f of sections.flatMap((s) => s.forms))
    endpoint(
      router,
      f.path,
      {
        POST: [
          ...form(f.schema),
          async (req: Request, res: Response) => {
            const outcome = await f.handle(req, signed(res).user.id);
            if ('notice' in outcome) return done(res, outcome.notice);
            if ('page' in outcome) return sendPage(res, 200, outcome.page.title, outcome.page.body);
            await render(req, res, { error: outcome.error }, outcome.status);
          },
        ],
      },
      f.docs,
    );
  usePageErrors(router, '/account');
}
