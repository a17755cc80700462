import type { User } from '../kernel/user-store';

/** The claims of SPEC 2.4 for one person, app and set of granted scopes (sub included). */
export function userClaims(
  issuer: string,
  emailDomain: string,
  sub: string,
  user: User,
  scopes: readonly string[],
): Record<string, unknown> {
  const claims: Record<string, unknown> = {
    sub,
    [`${issuer}/beta`]: {
      likely_human: user.verificationLevel === 'orb' ? 'strong' : 'weak',
      credential_type: user.verificationLevel,
    },
    [`${issuer}/v1`]: { verification_level: user.verificationLevel },
  };
  if (scopes.includes('email')) claims.email = `${sub}@${emailDomain}`;
  if (scopes.includes('profile')) {
    if (user.name) claims.name = user.name;
    if (user.givenName) claims.given_name = user.givenName;
    if (user.familyName) claims.family_name = user.familyName;
  }
  return claims;
}
