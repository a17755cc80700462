import type { Request, Response } from 'express';
import type { Session } from '../domain/sessions';
import type { IdentityContext } from './context';

export const SESSION_COOKIE = 'attest_session';

export const secureCookies = (ctx: Pick<IdentityContext, 'config'>) => ctx.config.BASE_URL.startsWith('https:');

/** The session cookie's value, as the browser sent it (unchecked). */
export const sessionCookieOf = (req: Request): string | undefined =>
  (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];

/**
 * The browser's live session, if its cookie names one, unless its user has since been deleted or
 * disabled (a memory lookup once warm).
 */
export async function currentSession(
  ctx: IdentityContext,
  req: Request,
): Promise<{ id: string; session: Session } | null> {
  const id = sessionCookieOf(req);
  const session = await ctx.sessions.find(id);
  if (!session || !id) return null;
  const user = await ctx.users.findById(session.userId);
  return user && !user.disabledAt ? { id, session } : null;
}

export function setSessionCookie(ctx: IdentityContext, res: Response, id: string): void {
  res.cookie(SESSION_COOKIE, id, {
    httpOnly: true,
    secure: secureCookies(ctx),
    sameSite: 'lax',
    path: '/',
    maxAge: ctx.config.sessionMaxAgeSeconds * 1000,
  });
}

export function clearSessionCookie(ctx: IdentityContext, res: Response): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, secure: secureCookies(ctx), sameSite: 'lax', path: '/' });
}
