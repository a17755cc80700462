import type { Request, Response } from 'express';
import type Joi from 'joi';
import type { ProceedDeps } from '../oauth';
import { completeSignIn, type SignedIn } from './sign-in-service';
import { postedTarget, readTarget, targetCsrf, type SignInTarget } from './signin-target';

/**
 * A sign-in's way through the pages, bound to its services once in the composition root: which
 * authorization request (or the account page) it is for, and how it ends (completeSignIn: a new session,
 * then the request moves on). The sign-in and sign-up routes use it without the services behind it.
 */
export interface SignInFlow {
  /** The page's CSRF token; passkey ceremonies are bound to it too (this browser, this target). */
  targetCsrf(req: Request, res: Response, target: SignInTarget): string;
  /** The target a GET (query) or POST (form) names, or null after answering with the error page. */
  readTarget(
    req: Request,
    res: Response,
    source: Record<string, unknown>,
    schema: Joi.ObjectSchema,
  ): Promise<SignInTarget | null>;
  /** A posted form's target, after its CSRF check; null after answering with an error page. */
  postedTarget(
    req: Request,
    res: Response,
    schema: Joi.ObjectSchema,
  ): Promise<{ target: SignInTarget; csrf: string } | null>;
  /** Ends a verified sign-in (completeSignIn): a new session, then on to the request or the account page. */
  complete(req: Request, res: Response, signedIn: SignedIn): Promise<void>;
}

export const signInFlow = (deps: ProceedDeps): SignInFlow => ({
  targetCsrf: (req, res, target) => targetCsrf(deps, req, res, target),
  readTarget: (req, res, source, schema) => readTarget(deps, req, res, source, schema),
  postedTarget: (req, res, schema) => postedTarget(deps, req, res, schema),
  complete: (req, res, signedIn) => completeSignIn(deps, req, res, signedIn),
});
