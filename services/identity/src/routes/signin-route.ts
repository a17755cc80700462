import type { Request, Response, Router } from 'express';
import cookieParser from 'cookie-parser';
import { endpoint, failureFields, formBody, refusalFields } from '@attest/common';
import { DUMMY_PASSWORD_HASH, verifyPassword } from '../domain/crypto';
import { signInPage } from '../views/pages';
import { expiredInteraction, postedInteraction } from './authorization-flow';
import type { IdentityContext } from './context';
import { csrfToken } from './csrf';
import { signInKeys } from './failure-limits';
import { pageErrors } from './page-errors';
import { completeSignIn } from './sign-in-service';
import { requireFormContentType } from './steps';

const TOO_MANY = 'Too many failed attempts. Wait a few minutes and try again.';

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
    const again = (error: string, status: number, headers: Record<string, string> = {}) => {
      const page = { interaction: id, csrf: csrfToken(ctx, req, res, id), appName: name, username, error };
      signInPage(res.set(headers), { ...page, redirectUri: interaction.request.redirectUri }, status);
    };
    if (!username || !password) return again('Enter your username and password.', 400);

    // Passwords are weak secrets: the limit is checked in the shared store too, not only in this process.
    const keys = signInKeys(req, username);
    const blocked = await ctx.limits.signIn.blockedAnywhere(keys);
    if (blocked) return again(TOO_MANY, 429, refusalFields(blocked));
    const user = await ctx.users.findByUsername(username);
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    if (!user || !ok) {
      const count = await ctx.limits.signIn.recordFailure(keys);
      if (count.exceeded) return again(TOO_MANY, 429, refusalFields(count.exceeded));
      return again('Unknown username or wrong password.', 400, failureFields(count));
    }
    await ctx.limits.signIn.forget('per-user-and-address', keys['per-user-and-address']!);
    await completeSignIn(ctx, req, res, { interactionId: id, interaction, userId: user.id, amr: ['pwd'] });
  };

  endpoint(router, '/signin', {
    GET: [cookieParser(), show],
    POST: [cookieParser(), requireFormContentType, formBody(ctx.config.BODY_LIMIT), submit],
  });
  router.use('/signin', pageErrors);
}
