import type { Request, Response } from 'express';
import type { Interaction } from '../domain/sessions';
import type { User } from '../store/user-store';
import { csrfToken, csrfValid, expiredInteraction, proceed, SESSION_COOKIE, setSessionCookie } from './authorization-flow';
import type { IdentityContext } from './context';
import { errorPage } from '../views/pages';

/**
 * Where a sign-in (or sign-up) continues: the authorization request it belongs to, or the account
 * page (`next=account`), which needs a signed-in user but no app.
 */
export type SignInTarget = { kind: 'interaction'; id: string; interaction: Interaction } | { kind: 'account' };

/** The form fields and query string that carry a target from page to page. */
export const targetFields = (t: SignInTarget): Record<string, string> => (t.kind === 'account' ? { next: 'account' } : { interaction: t.id });
export const targetQuery = (t: SignInTarget) => new URLSearchParams(targetFields(t)).toString();

const binding = (t: SignInTarget) => (t.kind === 'account' ? 'account-signin' : t.id);

/** The page's CSRF token; passkey ceremonies are bound to it too (this browser, this target). */
export const targetCsrf = (ctx: IdentityContext, req: Request, res: Response, t: SignInTarget) => csrfToken(ctx, req, res, binding(t));

/** The target a GET (query) or POST (form) names, or null after answering with the error page. */
export async function readTarget(ctx: IdentityContext, res: Response, source: Record<string, unknown>): Promise<SignInTarget | null> {
  if (source.next === 'account' && source.interaction === undefined) return { kind: 'account' };
  const id = typeof source.interaction === 'string' ? source.interaction : '';
  const interaction = await ctx.interactions.find(id);
  if (!interaction) {
    expiredInteraction(res);
    return null;
  }
  return { kind: 'interaction', id, interaction };
}

/** A posted form's target, after its CSRF check; null after answering with an error page. */
export async function postedTarget(ctx: IdentityContext, req: Request, res: Response): Promise<{ target: SignInTarget; csrf: string } | null> {
  const body = req.body as Record<string, unknown>;
  const target = await readTarget(ctx, res, body);
  if (!target) return null;
  const csrf = typeof body.csrf === 'string' ? body.csrf : undefined;
  if (!csrfValid(ctx, req, binding(target), csrf)) {
    errorPage(res, 403, { code: 'invalid_csrf', detail: 'The form could not be verified. Go back and try again.', attribute: 'csrf' });
    return null;
  }
  return { target, csrf: csrf! };
}

/**
 * Every sign-in method ends here: a new session (the browser's previous one ends), then on to the
 * authorization request, or to the account page.
 */
export async function completeSignIn(ctx: IdentityContext, req: Request, res: Response, target: SignInTarget, user: User, amr: string[]): Promise<void> {
  const session = { userId: user.id, authTime: Math.floor(Date.now() / 1000), amr };
  const previous = (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];
  setSessionCookie(ctx, res, await ctx.sessions.rotate(previous, session));
  if (target.kind === 'account') return res.redirect(303, '/account');
  const updated = { ...target.interaction, signedIn: true };
  await ctx.interactions.update(target.id, updated);
  await proceed(ctx, res, target.id, updated, session, 303);
}
