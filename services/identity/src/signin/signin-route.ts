import type { Request, Response, Router } from 'express';
import cookieParser from 'cookie-parser';
import { endpoint, failureFields, formBody, refusalFields, requestActor } from '@attest/common';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { dummyPasswordHash, verifyPassword } from '../kernel/crypto';
import { parseCredential, passkeyAmr } from './passkeys';
import { formAction } from '../kernel/pages';
import { signInPage } from './signin-page';
import { typedUsernameHash } from './account-audit';
import type { KernelServices } from '../kernel/services';
import type { SignInServices } from './services';
import type { SignInFlow } from './sign-in-flow';
import { upgradePasswordHash } from './password-upgrade';
import { checkedValue } from '../kernel/form-check';
import { SIGNIN_FORM, SIGNIN_QUERY, SIGNIN_USERNAME_MAX_LENGTH } from './signin-forms';
import { addressKeys, signInKeys } from '../kernel/failure-limits';
import { passkeyMessage } from './passkey-messages';
import { usePageErrors } from '../kernel/page-errors';
import { afterSignIn, targetFields, targetQuery, type SignInTarget } from './signin-target';
import { requireFormContentType } from '../kernel/http-steps';
import { signinDocs } from './signin-route.openapi';

export { SIGNIN_FORM, SIGNIN_QUERY };

const TOO_MANY = 'Too many failed attempts. Wait a few minutes and try again.';

/** GET|POST /signin: a password or a passkey, for an authorization request or for the account page. */
/** What /signin uses: the flow (target, completion), passwords (users, limits), passkeys, the audit trail. */
export type SignInRouteDeps = Pick<KernelServices, 'apps' | 'audit' | 'config' | 'limits' | 'logger' | 'users'> &
  Pick<SignInServices, 'passkeys'> & {
    flow: SignInFlow;
  };

export function signInRoute(router: Router, ctx: SignInRouteDeps): void {
  const appName = async (t: SignInTarget) => {
    if (t.kind !== 'interaction') return null;
    return (await ctx.apps.find(t.interaction.request.clientId))?.name ?? t.interaction.request.clientId;
  };

  /** The page, with a fresh passkey ceremony bound to this browser's CSRF token. */
  const render = async (
    req: Request,
    res: Response,
    t: SignInTarget,
    extra: { username?: string; error?: string } = {},
    status = 200,
    headers: Record<string, string> = {},
  ) => {
    const csrf = ctx.flow.targetCsrf(req, res, t);
    const passkey = await ctx.passkeys.authenticationOptions(csrf);
    const page = {
      fields: { ...targetFields(t), csrf },
      appName: await appName(t),
      formAction: t.kind !== 'interaction' ? "'self'" : formAction(t.interaction.request.redirectUri),
      passkey,
      signupUrl: ctx.config.signupEnabled ? `/signup?${targetQuery(t)}` : null,
      username: extra.username ?? (t.kind === 'interaction' ? t.interaction.request.loginHint : undefined),
      error: extra.error,
    };
    signInPage(res.set(headers), page, status);
  };

  const show = async (req: Request, res: Response) => {
    const target = await ctx.flow.readTarget(req, res, req.query as Record<string, unknown>, SIGNIN_QUERY);
    if (target) await render(req, res, target);
  };

  const withPassword = async (req: Request, res: Response, target: SignInTarget) => {
    const username = checkedValue(SIGNIN_FORM, req.body, 'username') ?? '';
    const password = checkedValue(SIGNIN_FORM, req.body, 'password') ?? '';
    const again = (error: string, status: number, headers: Record<string, string> = {}) =>
      render(req, res, target, { username, error }, status, headers);
    const typed = (req.body as Record<string, unknown>).username;
    if (typeof typed === 'string' && typed.trim().length > SIGNIN_USERNAME_MAX_LENGTH)
      return again(`A username has at most ${SIGNIN_USERNAME_MAX_LENGTH} characters.`, 400);
    if (!username || !password) return again('Enter your username and password.', 400);

    // Passwords are weak secrets: a slot is taken in the shared store before the password is hashed, so
    // parallel guesses on any replica never check more passwords than the limits allow.
    const admission = await ctx.limits.signIn.reserve(signInKeys(req, username));
    if (admission.refused) return again(TOO_MANY, 429, refusalFields(admission.refused));
    const { attempt } = admission;
    const user = await ctx.users.findByUsername(username);
    const ok = await verifyPassword(password, user?.passwordHash ?? dummyPasswordHash(ctx.config.PASSWORD_HASH_COST));
    const appId = target.kind === 'interaction' ? target.interaction.request.clientId : null;
    // an unknown username may be a password typed in the wrong field: only its keyed hash is kept
    const typedUsername = user ? { username } : { username_hash: typedUsernameHash(ctx, username) };
    const audited = (type: 'signin.succeeded' | 'signin.failed', reason?: string) =>
      ctx.audit.record({
        type,
        actor: requestActor(req, user && ok ? 'user' : 'anonymous', user && ok ? user.id : null),
        subject: user?.id ?? null,
        detail: { method: 'password', ...typedUsername, app_id: appId, ...(reason ? { reason } : {}) },
      });
    if (!user?.passwordHash || !ok) {
      await audited('signin.failed', user ? 'wrong_password' : 'unknown_username');
      const count = await attempt.failed();
      return again('Unknown username or wrong password.', 400, failureFields(count));
    }
    // the password was right: the slot is given back (and this user's failures from here forgotten)
    await attempt.succeeded(['per-user-and-address']);
    // told only to whoever knows the password
    if (user.disabledAt) {
      await audited('signin.failed', 'user_disabled');
      return again('This account is disabled. Contact the operator of this service.', 403);
    }
    await audited('signin.succeeded');
    await upgradePasswordHash(ctx, user, password);
    await ctx.flow.complete(req, res, { ...afterSignIn(target), userId: user.id, amr: ['pwd'] });
  };

  const withPasskey = async (req: Request, res: Response, target: SignInTarget, csrf: string) => {
    const body = req.body as Record<string, unknown>;
    const appId = target.kind === 'interaction' ? target.interaction.request.clientId : null;
    // a slot is taken before the assertion is verified, given back when it was right
    const admission = await ctx.limits.passkeys.reserve(addressKeys(req, 'per-address-passkeys'));
    if (admission.refused) return render(req, res, target, { error: TOO_MANY }, 429, refusalFields(admission.refused));
    const { attempt } = admission;
    const result = await ctx.passkeys.authenticate(
      body.ceremony,
      csrf,
      parseCredential<AuthenticationResponseJSON>(body.credential),
    );
    const user = result.ok ? await ctx.users.findById(result.value.userId) : null;
    if (!result.ok || !user) {
      const failure = result.ok ? 'unknown_credential' : result.failure;
      await ctx.audit.record({
        type: 'signin.failed',
        actor: requestActor(req, 'anonymous', null),
        subject: null,
        detail: { method: 'passkey', app_id: appId, reason: failure },
      });
      const count = await attempt.failed();
      return render(req, res, target, { error: passkeyMessage(failure) }, 400, failureFields(count));
    }
    await attempt.succeeded();
    if (user.disabledAt) {
      await ctx.audit.record({
        type: 'signin.failed',
        actor: requestActor(req, 'anonymous', null),
        subject: user.id,
        detail: { method: 'passkey', app_id: appId, reason: 'user_disabled' },
      });
      return render(
        req,
        res,
        target,
        { error: 'This account is disabled. Contact the operator of this service.' },
        403,
      );
    }
    await ctx.audit.record({
      type: 'signin.succeeded',
      actor: requestActor(req, 'user', user.id),
      subject: user.id,
      detail: { method: 'passkey', app_id: appId },
    });
    await ctx.flow.complete(req, res, {
      ...afterSignIn(target),
      userId: user.id,
      amr: passkeyAmr(result.value.userVerified),
    });
  };

  const submit = async (req: Request, res: Response) => {
    const posted = await ctx.flow.postedTarget(req, res, SIGNIN_FORM);
    if (!posted) return;
    if (checkedValue(SIGNIN_FORM, req.body, 'method') === 'passkey')
      return withPasskey(req, res, posted.target, posted.csrf);
    await withPassword(req, res, posted.target);
  };

  endpoint(
    router,
    '/signin',
    {
      GET: [cookieParser(), show],
      POST: [cookieParser(), requireFormContentType, formBody(ctx.config.BODY_LIMIT), submit],
    },
    signinDocs,
  );
  usePageErrors(router, '/signin');
}
