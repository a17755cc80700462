import type { Request, Response, Router } from 'express';
import cookieParser from 'cookie-parser';
import { endpoint, failureFields, formBody, refusalFields } from '@attest/common';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { newUserId } from '../kernel/ids';
import { parseCredential, passkeyAmr } from './passkeys';
import { errorPage, formAction } from '../kernel/pages';
import { signUpPage, signUpPasskeyPage } from './signup-page';
import { recordAccountEvent } from './account-audit';
import type { KernelServices } from '../kernel/services';
import type { SignInServices } from './services';
import type { SignInFlow } from './sign-in-flow';
import { checkedValue } from '../kernel/form-check';
import { SIGNIN_QUERY, SIGNUP_FORM, USERNAME } from './signin-forms';
import { addressKeys } from '../kernel/failure-limits';
import { passkeyMessage } from './passkey-messages';
import { usePageErrors } from '../kernel/page-errors';
import { afterSignIn, targetFields, targetQuery, type SignInTarget } from './signin-target';
import { requireFormContentType } from '../kernel/http-steps';
import { signupDocs } from './signup-route.openapi';

export { SIGNIN_QUERY, SIGNUP_FORM, USERNAME };

const TOO_MANY = 'Too many sign-up attempts from your network. Wait a few minutes and try again.';

/** GET|POST /signup: self sign-up with a passkey (step 1: username; step 2: the passkey), when SIGNUP_ENABLED. */
/** What /signup uses: the flow (target, completion), the new account with its passkey, the limits. */
export type SignUpRouteDeps = Pick<KernelServices, 'apps' | 'audit' | 'config' | 'limits' | 'logger' | 'users'> &
  Pick<SignInServices, 'passkeys' | 'createPasskeyAccount'> & {
    flow: SignInFlow;
  };

export function signUpRoute(router: Router, ctx: SignUpRouteDeps): void {
  const appName = async (t: SignInTarget) =>
    t.kind !== 'interaction'
      ? null
      : ((await ctx.apps.find(t.interaction.request.clientId))?.name ?? t.interaction.request.clientId);
  const formActionOf = (t: SignInTarget) =>
    t.kind !== 'interaction' ? "'self'" : formAction(t.interaction.request.redirectUri);

  const enabled = (_req: Request, res: Response, next: (err?: unknown) => void) => {
    if (ctx.config.signupEnabled) return next();
    errorPage(res, 403, {
      code: 'signup_disabled',
      detail: 'Creating an account here is turned off. Ask the operator for an account.',
      attribute: null,
    });
  };

  const details = async (
    req: Request,
    res: Response,
    t: SignInTarget,
    input: { username?: string; name?: string; error?: string } = {},
    status = 200,
    headers: Record<string, string> = {},
  ) => {
    const csrf = ctx.flow.targetCsrf(req, res, t);
    signUpPage(
      res.set(headers),
      {
        fields: { ...targetFields(t), csrf },
        appName: await appName(t),
        signInUrl: `/signin?${targetQuery(t)}`,
        ...input,
      },
      status,
    );
  };

  const show = async (req: Request, res: Response) => {
    const target = await ctx.flow.readTarget(req, res, req.query as Record<string, unknown>, SIGNIN_QUERY);
    if (target) await details(req, res, target);
  };

  const submitDetails = async (req: Request, res: Response, t: SignInTarget, csrf: string) => {
    const typed = req.body as { username?: unknown };
    const username = checkedValue(SIGNUP_FORM, req.body, 'username');
    const name = (checkedValue(SIGNUP_FORM, req.body, 'name') ?? '').slice(0, 200);
    if (!username) {
      // shown back as typed (trimmed), so the user can correct it
      const shown = typeof typed.username === 'string' ? typed.username.trim() : '';
      const error = 'Choose a username of 3 to 64 letters, digits or . _ - @ +';
      return details(req, res, t, { username: shown, name, error }, 400);
    }
    // Every username checked takes a slot (kept, whatever the answer), before the lookup: sign-ups from one
    // address are limited, and so is what they can learn about which usernames exist.
    const admission = await ctx.limits.signUps.reserve(addressKeys(req, 'per-address-signups'));
    if (admission.refused)
      return details(req, res, t, { username, name, error: TOO_MANY }, 429, refusalFields(admission.refused));
    const fields = failureFields(await admission.attempt.failed());
    if (await ctx.users.findByUsername(username))
      return details(req, res, t, { username, name, error: passkeyMessage('username_taken') }, 409, fields);
    res.set(fields);
    const passkey = await ctx.passkeys.registrationOptions('signup', csrf, {
      userId: newUserId(),
      username,
      name: name || null,
    });
    signUpPasskeyPage(res, { fields: { ...targetFields(t), csrf }, username, formAction: formActionOf(t), passkey });
  };

  const submitPasskey = async (req: Request, res: Response, t: SignInTarget, csrf: string) => {
    const body = req.body as Record<string, unknown>;
    const credential = parseCredential<RegistrationResponseJSON>(body.credential);
    const result = await ctx.passkeys.register(
      'signup',
      body.ceremony,
      csrf,
      credential,
      'Passkey created at sign-up',
      ctx.createPasskeyAccount,
    );
    if (!result.ok) {
      const status = result.failure === 'username_taken' || result.failure === 'already_registered' ? 409 : 400;
      return details(req, res, t, { error: passkeyMessage(result.failure) }, status);
    }
    const userId = result.value.account.userId;
    ctx.logger.info('account created by passkey sign-up', { user_id: userId });
    await recordAccountEvent(ctx, req, userId, 'user.signed_up', {
      method: 'passkey',
      username: result.value.account.username,
      app_id: t.kind === 'interaction' ? t.interaction.request.clientId : null,
      user_verified: result.value.userVerified,
    });
    await ctx.flow.complete(req, res, { ...afterSignIn(t), userId, amr: passkeyAmr(result.value.userVerified) });
  };

  const submit = async (req: Request, res: Response) => {
    const posted = await ctx.flow.postedTarget(req, res, SIGNUP_FORM);
    if (!posted) return;
    const step = checkedValue(SIGNUP_FORM, req.body, 'step');
    if (step === 'passkey') return submitPasskey(req, res, posted.target, posted.csrf);
    await submitDetails(req, res, posted.target, posted.csrf);
  };

  endpoint(
    router,
    '/signup',
    {
      GET: [enabled, cookieParser(), show],
      POST: [enabled, cookieParser(), requireFormContentType, formBody(ctx.config.BODY_LIMIT), submit],
    },
    signupDocs,
  );
  usePageErrors(router, '/signup');
}
