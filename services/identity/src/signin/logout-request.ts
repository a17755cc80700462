import { AppError } from '@attest/common';
import type { App } from '../kernel/app-store';
import type { Params } from '../oauth';
import type { IdTokenClaims } from '../kernel/tokens';

/** A validated RP-Initiated Logout 1.0 request. */
export interface LogoutRequest {
  /** The app asking, from client_id or the hint's audience. */
  app?: App;
  /** A valid id_token_hint's claims (it may have expired). */
  hint?: IdTokenClaims;
  postLogoutRedirectUri?: string;
  state?: string;
}

export const logoutError = {
  duplicate: (name: string) => new AppError('invalid_request', 400, `The ${name} parameter must be given once.`, name),
  clientMismatch: () =>
    new AppError('invalid_request', 400, 'client_id is not the audience of the id_token_hint.', 'client_id'),
  invalidClient: () => new AppError('invalid_client', 400, 'Unknown or disabled client_id.', 'client_id'),
  redirectWithoutClient: () =>
    new AppError(
      'invalid_request',
      400,
      'post_logout_redirect_uri needs id_token_hint or client_id.',
      'post_logout_redirect_uri',
    ),
  unregisteredRedirect: () =>
    new AppError(
      'invalid_request',
      400,
      'post_logout_redirect_uri is not registered for this app.',
      'post_logout_redirect_uri',
    ),
};

export interface LogoutDeps {
  apps: { find(id: string): Promise<App | null> };
  tokens: { verifyIdTokenHint(token: string): Promise<IdTokenClaims | null> };
}

/**
 * The checks of RP-Initiated Logout 1.0 §2–3: client_id must be the hint's audience, and a
 * post_logout_redirect_uri must be registered for that app, exactly; a failure of these is an error
 * page, and the browser is never sent to an unverified address. A hint that cannot be verified (not a
 * JWT, not signed by us, or signed by a key that has left the JWKS, e.g. after an emergency rotation) is
 * treated as absent: the user is asked to confirm, and a sign-out is never refused for it. Without
 * client_id, the redirect (and state) of such a request cannot be checked, so they are dropped.
 */
export async function parseLogoutRequest(params: Params, deps: LogoutDeps): Promise<LogoutRequest> {
  let hint: IdTokenClaims | undefined;
  let unverifiedHint = false;
  if (params.id_token_hint !== undefined) {
    hint = (await deps.tokens.verifyIdTokenHint(params.id_token_hint)) ?? undefined;
    unverifiedHint = !hint;
  }
  if (hint && params.client_id !== undefined && params.client_id !== hint.aud) throw logoutError.clientMismatch();
  const clientId = params.client_id ?? hint?.aud;
  let app: App | undefined;
  if (clientId !== undefined) {
    app = (await deps.apps.find(clientId)) ?? undefined;
    if (!app || app.disabledAt) throw logoutError.invalidClient();
  }
  if (unverifiedHint && !app) return {};
  const uri = params.post_logout_redirect_uri;
  if (uri !== undefined) {
    if (!app) throw logoutError.redirectWithoutClient();
    if (!app.postLogoutRedirectUris.includes(uri)) throw logoutError.unregisteredRedirect();
  }
  return { app, hint, postLogoutRedirectUri: uri, state: params.state };
}
