import type { NextFunction, Request, Response } from 'express';
import { toAppError } from '@attest/common';
/** An error sent back to the app's redirect URI (OAuth `error` names), as opposed to an error page. */
export class RedirectError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
    this.name = 'RedirectError';
  }
}

export const redirectErrors = {
  invalidRequest: (description: string) => new RedirectError('invalid_request', description),
  unsupportedResponseType: (value: string) =>
    new RedirectError('unsupported_response_type', `response_type '${value}' is not supported.`),
  invalidScope: (description: string) => new RedirectError('invalid_scope', description),
  unauthorizedClient: (description: string) => new RedirectError('unauthorized_client', description),
  accessDenied: () => new RedirectError('access_denied', 'The user denied the request.'),
  loginRequired: () => new RedirectError('login_required', 'The user is not signed in and prompt=none was requested.'),
  consentRequired: () =>
    new RedirectError('consent_required', 'The user has not consented and prompt=none was requested.'),
  requestNotSupported: (param: string) =>
    new RedirectError(`${param}_not_supported`, `The ${param} parameter is not supported.`),
};

/**
 * The error answer of an OAuth endpoint that answers JSON (RFC 6749 §5.2: /par, /device_authorization,
 * /bc-authorize): no-store, and a client error carries OAuth's `error` (by our code, in `names`; any other
 * client error is invalid_request) and `error_description`; a server error goes on unchanged.
 */
export const oauthJsonErrors =
  (names: Record<string, string>) => (err: unknown, req: Request, res: Response, next: NextFunction) => {
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
    const appError = toAppError(err, req);
    if (appError.status >= 500) return next(err);
    const error = names[appError.code] ?? 'invalid_request';
    next(appError.withExtra({ error, error_description: appError.detail }));
  };
