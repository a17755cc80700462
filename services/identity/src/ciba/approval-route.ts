import type { NextFunction, Request, Response, Router } from 'express';
import cookieParser from 'cookie-parser';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { endpoint, failureFields, formBody, refusalFields, requestActor } from '@attest/common';
import { parseCredential, passkeyAmr, passkeyMessage, type Passkeys } from '../signin';
import { acrOf } from '../oauth';
import { verifyPassword } from '../kernel/crypto';
import type { KernelServices, TokenServices } from '../kernel/services';
import type { User } from '../kernel/user-store';
import { checkedValue } from '../kernel/form-check';
import { csrfValid } from '../kernel/csrf';
import { addressKeys, signInKeys } from '../kernel/failure-limits';
import { currentSession } from '../kernel/session-cookie';
import { requireFormContentType } from '../kernel/http-steps';
import { html, sendPage } from '../kernel/html';
import { usePageErrors } from '../kernel/page-errors';
import type { BackchannelRequests } from './backchannel-requests';
import { APPROVAL_FORMS } from './ciba-forms';
import { approvalDocs } from './approval-route.openapi';

/** The binding of an approval's passkey ceremony: this request, on the account page of this session. */
export const approvalBinding = (requestId: string, sessionId: string) => `ciba:${requestId}:${sessionId}`;

/** What the approval forms use: the session, the person's proof (password, passkey), the requests. */
export type ApprovalRouteDeps = Pick<KernelServices, 'audit' | 'config' | 'consents' | 'limits' | 'users'> &
  Pick<TokenServices, 'sessions'> & {
    passkeys: Pick<Passkeys, 'authenticate'>;
    ciba: Pick<BackchannelRequests, 'decide'>;
  };

interface Signed {
  sessionId: string;
  user: User;
}
const signed = (res: Response) => res.locals.approval as Signed;

/** A refused approval: its status, code and sentence, and the way back to the account page. */
function refused(res: Response, status: number, code: string, detail: string, attribute: string | null): void {
  sendPage(
    res,
    status,
    'Approval not given',
    html`<h1>The request was not approved</h1>
<p class="error" role="alert" id="approval-error">${detail}</p>
<p>Error code: <code id="error-code">${code}</code>${attribute ? html` (attribute <code id="error-attribute">${attribute}</code>)` : ''}</p>
<p><a href="/account#approvals">Back to your account</a></p>`,
  );
}

const gone = (res: Response) =>
  refused(
    res,
    404,
    'not_found',
    'This request is no longer waiting: it was decided already, or it expired.',
    'request_id',
  );

/**
 * POST /account/approvals/approve and /account/approvals/deny (issue 42): the signed-in person decides one of
 * their pending backchannel requests. Approving needs a proof made with the approval itself — a passkey
 * assertion with user verification (bound to this request and session), or the password — under the sign-in
 * failure limits; denying is the form alone. Each decides once (the store's conditional UPDATE).
 */
export function approvalRoute(router: Router, ctx: ApprovalRouteDeps): void {
  const requireSession = async (req: Request, res: Response, next: NextFunction) => {
    const current = await currentSession(ctx, req);
    const user = current ? await ctx.users.findById(current.session.userId) : null;
    if (!current || !user) return res.redirect(303, '/signin?next=account');
    res.locals.approval = { sessionId: current.session.id, user } satisfies Signed;
    next();
  };
  const requireCsrf = (schema: keyof typeof APPROVAL_FORMS) => (req: Request, res: Response, next: NextFunction) => {
    const presented = checkedValue(APPROVAL_FORMS[schema], req.body, 'csrf');
    if (csrfValid(ctx, req, `account:${signed(res).sessionId}`, presented)) return next();
    refused(res, 403, 'invalid_csrf', 'The form could not be verified. Go back and try again.', 'csrf');
  };
  const requestId = (req: Request, schema: keyof typeof APPROVAL_FORMS) =>
    checkedValue(APPROVAL_FORMS[schema], req.body, 'request_id') ?? '';

  /** The passkey's proof: a user-verified assertion by one of this person's passkeys; the amr, or null after answering. */
  const passkeyProof = async (req: Request, res: Response, id: string): Promise<string[] | null> => {
    const { user, sessionId } = signed(res);
    const admission = await ctx.limits.passkeys.reserve(addressKeys(req, 'per-address-passkeys'));
    if (admission.refused) {
      res.set(refusalFields(admission.refused));
      refused(res, 429, 'too_many_requests', 'Too many failed attempts. Wait a few minutes and try again.', null);
      return null;
    }
    const body = req.body as Record<string, unknown>;
    const result = await ctx.passkeys.authenticate(
      body.ceremony,
      approvalBinding(id, sessionId),
      parseCredential<AuthenticationResponseJSON>(body.credential),
    );
    if (!result.ok || result.value.userId !== user.id || !result.value.userVerified) {
      const count = await admission.attempt.failed();
      res.set(failureFields(count));
      const detail = !result.ok
        ? passkeyMessage(result.failure)
        : result.value.userId !== user.id
          ? 'That passkey is not one of your account’s.'
          : 'Approving needs a passkey that verifies you (a PIN or biometric).';
      refused(res, 400, 'invalid_credential', detail, 'credential');
      return null;
    }
    await admission.attempt.succeeded();
    return passkeyAmr(true);
  };

  const passwordProof = async (req: Request, res: Response): Promise<string[] | null> => {
    const { user } = signed(res);
    if (!user.passwordHash) {
      refused(res, 400, 'required', 'Your account has no password: approve with a passkey.', 'credential');
      return null;
    }
    const admission = await ctx.limits.signIn.reserve(signInKeys(req, user.username));
    if (admission.refused) {
      res.set(refusalFields(admission.refused));
      refused(res, 429, 'too_many_requests', 'Too many failed attempts. Wait a few minutes and try again.', null);
      return null;
    }
    const password = checkedValue(APPROVAL_FORMS.approve, req.body, 'password');
    if (!password || !(await verifyPassword(password, user.passwordHash))) {
      const count = await admission.attempt.failed();
      res.set(failureFields(count));
      refused(res, 400, 'invalid_password', 'Your password is wrong: the request was not approved.', 'password');
      return null;
    }
    await admission.attempt.succeeded(['per-user-and-address']);
    return ['pwd'];
  };

  const approve = async (req: Request, res: Response) => {
    const { user } = signed(res);
    const id = requestId(req, 'approve');
    if (!id) return gone(res);
    const withPasskey = checkedValue(APPROVAL_FORMS.approve, req.body, 'credential') !== undefined;
    const amr = withPasskey ? await passkeyProof(req, res, id) : await passwordProof(req, res);
    if (!amr) return;
    const decided = await ctx.ciba.decide(id, user.id, { status: 'approved', acr: acrOf(user.verificationLevel), amr });
    if (!decided) return gone(res);
    // the app may read what it asked for (its /userinfo and introspection follow the consent); withdrawing the
    // app on the account page ends the tokens of this approval too
    await ctx.consents.grant(user.id, decided.appId, decided.scopes);
    await ctx.audit.record({
      type: 'ciba.approved',
      actor: requestActor(req, 'user', user.id),
      subject: user.id,
      detail: { request_id: id, app_id: decided.appId, amr, authorization_details: decided.authorizationDetails },
    });
    res.redirect(303, '/account?approval=approved#approvals');
  };

  const deny = async (req: Request, res: Response) => {
    const { user } = signed(res);
    const id = requestId(req, 'deny');
    const decided = id ? await ctx.ciba.decide(id, user.id, { status: 'denied' }) : null;
    if (!decided) return gone(res);
    await ctx.audit.record({
      type: 'ciba.denied',
      actor: requestActor(req, 'user', user.id),
      subject: user.id,
      detail: { request_id: id, app_id: decided.appId },
    });
    res.redirect(303, '/account?approval=denied#approvals');
  };

  const steps = (name: keyof typeof APPROVAL_FORMS) => [
    cookieParser(),
    requireSession,
    requireFormContentType,
    formBody(ctx.config.BODY_LIMIT),
    requireCsrf(name),
  ];
  endpoint(router, '/account/approvals/approve', { POST: [...steps('approve'), approve] }, approvalDocs.approve);
  endpoint(router, '/account/approvals/deny', { POST: [...steps('deny'), deny] }, approvalDocs.deny);
  usePageErrors(router, '/account/approvals');
}
