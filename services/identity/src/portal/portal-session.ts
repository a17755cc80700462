import { createHash, randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { PortalDeps } from './portal-deps';
import { cookieName, secureCookies } from '../kernel/session-cookie';
import type { User } from '../kernel/user-store';

/** The portal's own session cookie: apart from the sign-in session (attest_session), ended on its own. */
export const PORTAL_COOKIE = 'attest_portal';
/** The sign-in on its way (the state, bound to this browser). */
export const PORTAL_LOGIN_COOKIE = 'attest_portal_login';

export interface PortalSession {
  /** The cache key's hash part: the CSRF purpose of the session's forms. */
  id: string;
  user: User;
  idToken: string;
}

interface Stored {
  userId: string;
  idToken: string;
}

const key = (hash: string) => `portal:session:${hash}`;
const hashOf = (cookie: string) => createHash('sha256').update(cookie).digest('hex');
const cookieOptions = (ctx: Pick<PortalDeps, 'config'>) => ({
  httpOnly: true,
  secure: secureCookies(ctx),
  sameSite: 'lax' as const,
  path: '/',
});
const ttlMs = (ctx: Pick<PortalDeps, 'config'>) => ctx.config.sessionIdleSeconds * 1000;

/** A new portal session after a sign-in: only the cookie's hash is kept (in the cache, for the idle timeout). */
export async function startPortalSession(
  ctx: Pick<PortalDeps, 'config' | 'cache'>,
  res: Response,
  stored: Stored,
): Promise<void> {
  const cookie = randomBytes(32).toString('hex');
  await ctx.cache.set(key(hashOf(cookie)), JSON.stringify(stored), ttlMs(ctx));
  res.cookie(cookieName(ctx, PORTAL_COOKIE), cookie, { ...cookieOptions(ctx), maxAge: ttlMs(ctx) });
}

/** The browser's portal session, renewed for the idle timeout; null without one, or when its user is gone or disabled. */
export async function currentPortalSession(
  ctx: Pick<PortalDeps, 'config' | 'cache' | 'users'>,
  req: Request,
): Promise<PortalSession | null> {
  const cookie = (req.cookies as Record<string, string> | undefined)?.[cookieName(ctx, PORTAL_COOKIE)];
  if (!cookie || !/^[0-9a-f]{64}$/.test(cookie)) return null;
  const id = hashOf(cookie);
  const raw = await ctx.cache.get(key(id));
  if (!raw) return null;
  const stored = JSON.parse(raw) as Stored;
  const user = await ctx.users.findById(stored.userId);
  if (!user || user.disabledAt) {
    await ctx.cache.del(key(id));
    return null;
  }
  await ctx.cache.set(key(id), raw, ttlMs(ctx));
  return { id, user, idToken: stored.idToken };
}

export async function endPortalSession(
  ctx: Pick<PortalDeps, 'config' | 'cache'>,
  res: Response,
  session: PortalSession,
): Promise<void> {
  await ctx.cache.del(key(session.id));
  res.clearCookie(cookieName(ctx, PORTAL_COOKIE), cookieOptions(ctx));
}

export const loginCookie = {
  set: (ctx: Pick<PortalDeps, 'config'>, res: Response, state: string) =>
    res.cookie(cookieName(ctx, PORTAL_LOGIN_COOKIE), state, { ...cookieOptions(ctx), maxAge: 600000 }),
  get: (ctx: Pick<PortalDeps, 'config'>, req: Request) =>
    (req.cookies as Record<string, string> | undefined)?.[cookieName(ctx, PORTAL_LOGIN_COOKIE)],
  clear: (ctx: Pick<PortalDeps, 'config'>, res: Response) =>
    res.clearCookie(cookieName(ctx, PORTAL_LOGIN_COOKIE), cookieOptions(ctx)),
};
