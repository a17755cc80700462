import type { Request, Response, Router } from 'express';
import cookieParser from 'cookie-parser';
import { endpoint, formBody } from '@attest/common';
import { DUMMY_PASSWORD_HASH, verifyPassword } from '../domain/crypto';
import { signInPage } from '../views/pages';
import {
  csrfToken,
  expiredInteraction,
  postedInteraction,
  proceed,
  SESSION_COOKIE,
  setSessionCookie,
} from './authorization-flow';
import type { IdentityContext } from './context';

/**
 * Failed sign-ins are limited per (username, client address) and per client address, so one source
 * cannot guess passwords at speed, and nobody can lock a user out from everywhere by failing on purpose.
 */
const MAX_FAILURES_PER_USER_AND_IP = 10;
const MAX_FAILURES_PER_IP = 100;
const FAILURE_WINDOW_MS = 15 * 60 * 1000;

/** GET|POST /signin: the username + password page of an authorization request. */
export function signInRoute(router: Router, ctx: IdentityContext): void {
  const appName = async (clientId: string) => (await ctx.apps.find(clientId))?.name ?? clientId;

  const show = async (req: Request, res: Response) => {
    const id = String(req.query.interaction ?? '');
    const interaction = await ctx.interactions.find(id);
    if (!interaction) return expiredInteraction(res);
    signInPage(res, { interaction: id, csrf: csrfToken(ctx, req, res, id), appName: await appName(interaction.request.clientId), redirectUri: interaction.request.redirectUri, username: interaction.request.loginHint });
  };

  const submit = async (req: Request, res: Response) => {
    const posted = await postedInteraction(ctx, req, res);
    if (!posted) return;
    const { id, interaction } = posted;
    const body = req.body as Record<string, unknown>;
    const username = typeof body.username === 'string' ? body.username.trim() : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const name = await appName(interaction.request.clientId);
    const again = (error: string, status: number) => signInPage(res, { interaction: id, csrf: csrfToken(ctx, req, res, id), appName: name, redirectUri: interaction.request.redirectUri, username, error }, status);
    if (!username || !password) return again('Enter your username and password.', 400);

    const perUser = `signin-failures:user:${req.ip}:${username.toLowerCase()}`;
    const perIp = `signin-failures:ip:${req.ip}`;
    const [userCount, ipCount] = await Promise.all([ctx.cache.get(perUser), ctx.cache.get(perIp)]);
    if (Number(userCount ?? 0) >= MAX_FAILURES_PER_USER_AND_IP || Number(ipCount ?? 0) >= MAX_FAILURES_PER_IP)
      return again('Too many failed attempts. Wait a few minutes and try again.', 429);
    const user = await ctx.users.findByUsername(username);
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    if (!user || !ok) {
      await Promise.all([ctx.cache.incr(perUser, FAILURE_WINDOW_MS), ctx.cache.incr(perIp, FAILURE_WINDOW_MS)]);
      return again('Unknown username or wrong password.', 400);
    }
    await ctx.cache.del(perUser);
    const session = { userId: user.id, authTime: Math.floor(Date.now() / 1000) };
    const previous = (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];
    setSessionCookie(ctx, res, await ctx.sessions.rotate(previous, session));
    const updated = { ...interaction, signedIn: true };
    await ctx.interactions.update(id, updated);
    await proceed(ctx, res, id, updated, session, 303);
  };

  endpoint(router, '/signin', { GET: [cookieParser(), show], POST: [cookieParser(), formBody(ctx.config.BODY_LIMIT), submit] });
}
