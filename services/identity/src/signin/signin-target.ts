import type { Request, Response } from 'express';
import type Joi from 'joi';
import { expiredInteraction, type Interaction, interactionBinding, type InteractionDeps } from '../oauth';
import { errorPage } from '../kernel/pages';
import type { KernelServices } from '../kernel/services';
import { csrfToken, csrfValid } from '../kernel/csrf';
import { checkedValue } from '../kernel/form-check';
import type { AfterSignIn } from './sign-in-service';

/**
 * What a sign-in (or sign-up) page is for: the authorization request it belongs to, or the account
 * page (`next=account`), which needs a signed-in user but no app. The pages carry it from form to form;
 * completeSignIn (sign-in-service.ts) takes it on from `afterSignIn`.
 */
export type SignInTarget =
  | { kind: 'interaction'; id: string; interaction: Interaction }
  | { kind: 'account' }
  | { kind: 'device'; userCode: string };

/** The form fields and query string that carry a target from page to page. */
export const targetFields = (t: SignInTarget): Record<string, string> =>
  t.kind === 'account'
    ? { next: 'account' }
    : t.kind === 'device'
      ? { next: 'device', user_code: t.userCode }
      : { interaction: t.id };
export const targetQuery = (t: SignInTarget) => new URLSearchParams(targetFields(t)).toString();

/** Where completeSignIn sends the browser once the user is known. */
export const afterSignIn = (t: SignInTarget): AfterSignIn =>
  t.kind === 'account'
    ? { account: true }
    : t.kind === 'device'
      ? { device: t.userCode }
      : { interactionId: t.id, interaction: t.interaction };

const purpose = (t: SignInTarget) =>
  t.kind === 'account' ? 'account-signin' : t.kind === 'device' ? 'device-signin' : t.id;

/** A user code as /device reads it (letters, spaces, dashes): /device checks it, and counts a wrong one. */
const USER_CODE_SHAPE = /^[A-Za-z0-9 -]{1,40}$/;

/** The page's CSRF token; passkey ceremonies are bound to it too (this browser, this target). */
export const targetCsrf = (ctx: Pick<KernelServices, 'config'>, req: Request, res: Response, t: SignInTarget) =>
  csrfToken(ctx, req, res, purpose(t));

/**
 * The target a GET (query) or POST (form) names, checked with that request's schema (SIGNIN_QUERY,
 * SIGNIN_FORM, SIGNUP_FORM), or null after answering with the error page. `next=account` without an
 * interaction is the account page; anything else must name a sign-in in progress.
 */
export async function readTarget(
  ctx: InteractionDeps,
  req: Request,
  res: Response,
  source: Record<string, unknown>,
  schema: Joi.ObjectSchema,
): Promise<SignInTarget | null> {
  const next = checkedValue(schema, source, 'next');
  if (next === 'account' && source.interaction === undefined) return { kind: 'account' };
  // the device flow (RFC 8628): back to /device with the code once signed in
  const userCode = checkedValue(schema, source, 'user_code');
  if (next === 'device' && source.interaction === undefined && userCode && USER_CODE_SHAPE.test(userCode))
    return { kind: 'device', userCode };
  const id = checkedValue(schema, source, 'interaction') ?? '';
  const interaction = await ctx.interactions.find(id, interactionBinding(ctx, req, res));
  if (!interaction) {
    expiredInteraction(res);
    return null;
  }
  return { kind: 'interaction', id, interaction };
}

/** A posted form's target, after its CSRF check; null after answering with an error page. */
export async function postedTarget(
  ctx: InteractionDeps,
  req: Request,
  res: Response,
  schema: Joi.ObjectSchema,
): Promise<{ target: SignInTarget; csrf: string } | null> {
  const body = req.body as Record<string, unknown>;
  const target = await readTarget(ctx, req, res, body, schema);
  if (!target) return null;
  const csrf = checkedValue(schema, body, 'csrf');
  if (!csrf || !csrfValid(ctx, req, purpose(target), csrf)) {
    errorPage(res, 403, {
      code: 'invalid_csrf',
      detail: 'The form could not be verified. Go back and try again.',
      attribute: 'csrf',
    });
    return null;
  }
  return { target, csrf };
}
