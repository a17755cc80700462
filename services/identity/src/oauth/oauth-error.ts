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
