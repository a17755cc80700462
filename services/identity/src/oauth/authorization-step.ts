import type { AuthorizationRequest } from './authorization-request';
import type { Session } from '../kernel/sessions';

/** What an authorization request needs next. */
export type AuthorizationStep = 'signin' | 'consent' | 'login_required' | 'consent_required' | 'finish';

/** What happened during this request's interaction so far (nothing yet at /authorize). */
export interface InteractionProgress {
  signedIn?: boolean;
  consented?: boolean;
}

/** The consent to a refresh token (OpenID Connect Core §11): the app keeps its access while the person is away. */
export const OFFLINE_ACCESS = 'offline_access';

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * What a person consents to for a request: its OpenID Connect scopes and, with RFC 8707 `resource`, the
 * resource (its uri) and each scope asked of it as `<uri>#<scope>`: approving an app's sign-in, or one
 * resource's scopes, approves no other resource's and no wider scope of it.
 */
export function consentScopes(request: Pick<AuthorizationRequest, 'scopes' | 'resource' | 'offlineAccess'>): string[] {
  const { resource } = request;
  const asked = resource
    ? [...request.scopes, resource.uri, ...resource.scopes.map((s) => `${resource.uri}#${s}`)]
    : [...request.scopes];
  // a refresh token keeps the access after the person leaves: consented to in words, like each scope
  if (request.offlineAccess) asked.push(OFFLINE_ACCESS);
  return asked;
}

function needsSignIn(
  request: AuthorizationRequest,
  progress: InteractionProgress,
  session: Pick<Session, 'authTime'> | null,
): boolean {
  if (!session) return true;
  if (progress.signedIn) return false;
  if (request.prompt.includes('login')) return true;
  if (request.maxAge === undefined) return false;
  // max_age=0 means "authenticate now", like prompt=login (OIDC Core 3.1.2.1).
  return request.maxAge === 0 || nowSeconds() - session.authTime > request.maxAge;
}

/** Sign-in, then consent, then back to the app; prompt=none turns a needed page into an error. */
export function nextStep(
  request: AuthorizationRequest,
  progress: InteractionProgress,
  session: Pick<Session, 'authTime'> | null,
  granted: readonly string[],
): AuthorizationStep {
  const silent = request.prompt.includes('none');
  if (needsSignIn(request, progress, session)) return silent ? 'login_required' : 'signin';
  const missing = consentScopes(request).some((s) => !granted.includes(s));
  if (missing || (request.prompt.includes('consent') && !progress.consented))
    return silent ? 'consent_required' : 'consent';
  return 'finish';
}
