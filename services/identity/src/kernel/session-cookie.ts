import type { Request, Response } from 'express';
import type { Session } from './sessions';
import type { KernelServices, TokenServices } from './services';

/** What reads the browser's session: its cookie's name (config), the session, its user. */
export type SessionReader = Pick<KernelServices, 'config' | 'users'> & Pick<TokenServices, 'sessions'>;

export const SESSION_COOKIE = 'attest_session';

export const secureCookies = (ctx: Pick<KernelServices, 'config'>) => ctx.config.BASE_URL.startsWith('https:');

/**
 * A cookie's name: with an https BASE_URL `__Host-<name>`, which browsers accept only when it is
 * Secure, Path=/ and has no Domain, so no sibling subdomain can set or shadow it (login CSRF, session
 * fixation); with http (`pnpm start` on localhost) the plain name, since `__Host-` requires Secure.
 */
export const cookieName = (ctx: Pick<KernelServices, 'config'>, name: string) =>
  secureCookies(ctx) ? `__Host-${name}` : name;

/** The session cookie's value, as the browser sent it (unchecked). */
export const sessionCookieOf = (req: Request, ctx: Pick<KernelServices, 'config'>): string | undefined =>
  (req.cookies as Record<string, string> | undefined)?.[cookieName(ctx, SESSION_COOKIE)];

/**
 * The browser's live session, if its cookie names one, unless its user has since been deleted or
 * disabled (a memory lookup once warm).
 */
export async function currentSession(
  ctx: SessionReader,
  req: Request,
): Promise<{ id: string; session: Session } | null> {
  const id = sessionCookieOf(req, ctx);
  const session = await ctx.sessions.find(id);
  if (!session || !id) return null;
  const user = await ctx.users.findById(session.userId);
  return user && !user.disabledAt ? { id, session } : null;
}

export function setSessionCookie(ctx: Pick<KernelServices, 'config'>, res: Response, id: string): void {
  res.cookie(cookieName(ctx, SESSION_COOKIE), id, {
    httpOnly: true,
    secure: secureCookies(ctx),
    sameSite: 'lax',
    path: '/',
    maxAge: ctx.config.sessionMaxAgeSeconds * 1000,
  });
}

export function clearSessionCookie(ctx: Pick<KernelServices, 'config'>, res: Response): void {
  res.clearCookie(cookieName(ctx, SESSION_COOKIE), {
    httpOnly: true,
    secure: secureCookies(ctx),
    sameSite: 'lax',
    path: '/',
  });
}
