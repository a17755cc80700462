import type { User } from '../kernel/user-store';
import type { AppDirectory, ConsentDirectory, SubjectDirectory, UserDirectory } from '../kernel/directories';
import { consentKey, type Revocations } from '../kernel/revocations';
import type { AccessTokenClaims } from '../kernel/tokens';

export interface GrantDeps {
  revocations: Pick<Revocations, 'isRevoked' | 'revokedBeforeIssue'>;
  apps: Pick<AppDirectory, 'find'>;
  subjects: Pick<SubjectDirectory, 'userIdFor'>;
  users: Pick<UserDirectory, 'findById'>;
  consents: Pick<ConsentDirectory, 'find'>;
}

/**
 * The person behind a verified access token, or null when the token no longer grants anything:
 * revoked (itself, or its session ended), its app disabled, its subject or user gone, its user disabled,
 * a scope of it no longer consented (by default each scope of its `scope`; `covers` decides otherwise, e.g. a
 * resource's token, whose consent is recorded as `<uri>#<scope>`), or issued before the user last withdrew
 * the app's consent. Every lookup is in memory once warm.
 */
export async function grantHolder(
  deps: GrantDeps,
  claims: AccessTokenClaims,
  covers: (granted: readonly string[]) => boolean = (granted) =>
    claims.scope.split(' ').every((scope) => granted.includes(scope)),
): Promise<User | null> {
  if (await deps.revocations.isRevoked(claims.jti, typeof claims.sid === 'string' ? claims.sid : undefined))
    return null;
  const app = await deps.apps.find(claims.client_id);
  if (!app || app.disabledAt) return null;
  const userId = await deps.subjects.userIdFor(claims.client_id, claims.sub);
  const user = userId ? await deps.users.findById(userId) : null;
  if (!user || user.disabledAt) return null;
  if (deps.revocations.revokedBeforeIssue(consentKey(user.id, claims.client_id), claims.iat)) return null;
  return covers(await deps.consents.find(user.id, claims.client_id)) ? user : null;
}
