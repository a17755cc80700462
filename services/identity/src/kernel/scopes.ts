export const SUPPORTED_SCOPES = ['openid', 'email', 'profile'] as const;
export type Scope = (typeof SUPPORTED_SCOPES)[number];

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  openid: 'Sign you in with an identifier unique to this app, and your verification level',
  email: 'An email address that relays to you, unique to this app',
  profile: 'Your name',
};

/** Requested scopes we know, in a stable order; unknown ones are dropped (RFC 6749 §3.3). */
export function parseScopes(scope: string): Scope[] {
  const requested = new Set(scope.split(' ').filter(Boolean));
  return SUPPORTED_SCOPES.filter((s) => requested.has(s));
}
