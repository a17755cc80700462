import type { Revocations } from '../kernel/revocations';
import type { ResourceDirectory } from './resource-directory';
import type { BoundResource } from './resource-indicator';
import type { Resource } from './resource-store';

/**
 * The "before" revocation key of every token for a resource uri: set when the resource is deleted, so a
 * resource registered again with the same uri never takes the old one's tokens (a security review).
 */
export const resourceKey = (uri: string) => `resource:${uri}`;

/**
 * Whether the person's consent (`granted`, as the consent directory holds it) still covers a grant (a security
 * review of issue 41): for a resource, the resource and each scope granted of it, as the consent page records
 * them (`<uri>`, `<uri>#<scope>`: consentScopes); without one, the app's sign-in (`openid`). A consent
 * withdrawn (the account page, the admin API: the whole app) or narrowed ends the tokens and the refresh
 * tokens it no longer covers. Memory only: a few string comparisons.
 */
export function consentCovers(
  granted: readonly string[],
  resource: { uri: string; scopes: readonly string[] } | undefined,
): boolean {
  if (!resource) return granted.includes('openid');
  if (!granted.includes(resource.uri)) return false;
  for (const scope of resource.scopes) if (!granted.includes(`${resource.uri}#${scope}`)) return false;
  return true;
}

/**
 * consentCovers for a resource's access token, from its claims: `aud` is the resource, `scope` its scopes.
 * What a resource server's /introspect asks of the consent (app.ts, through grantHolder).
 */
export function consentCoversToken(granted: readonly string[], claims: { aud: string; scope: string }): boolean {
  return consentCovers(granted, { uri: claims.aud, scopes: claims.scope ? claims.scope.split(' ') : [] });
}

/**
 * Whether an access token for `resource` was issued to the resource registered now under its uri (a security
 * review): not one issued before a resource of that uri was deleted (resourceKey, revoked until the longest
 * access token has expired). A memory lookup.
 */
export function issuedToThisResource(
  revocations: Pick<Revocations, 'revokedBeforeIssue'>,
  resource: Pick<Resource, 'uri'>,
  iat: number,
): boolean {
  return !revocations.revokedBeforeIssue(resourceKey(resource.uri), iat);
}

/**
 * Whether a grant's resource is still the one registered under its uri (a security review): the same
 * resource_id, so a code or device grant approved for a resource deleted since (and perhaps registered again
 * with the same uri) gives no token. A grant made before ids were kept is taken as it is. Memory once warm.
 */
export async function grantResourceRegistered(
  resources: Pick<ResourceDirectory, 'findByUri'>,
  resource: BoundResource,
): Promise<boolean> {
  if (resource.id === undefined) return true;
  return (await resources.findByUri(resource.uri))?.id === resource.id;
}

/**
 * What a refresh token family still needs before its next access token (a security review of issue 41), as
 * refresh/refresh-tokens.ts asks it: the person's consent covers the family's grant (consentCovers), and a
 * family for a resource is for the resource registered now under its uri, the very one it was granted for (its
 * id; a family begun before ids were kept: the resource registered no later than the family began). A resource
 * deleted, or deleted and registered again, ends its families. Memory only once warm (the directories).
 */
export async function refreshGrantHolds(
  resources: Pick<ResourceDirectory, 'findByUri'>,
  granted: readonly string[],
  resource: BoundResource | undefined,
  familyIat: number,
): Promise<boolean> {
  if (!consentCovers(granted, resource)) return false;
  if (!resource) return true;
  const current = await resources.findByUri(resource.uri);
  if (!current) return false;
  return resource.id === undefined
    ? Math.floor(current.createdAt.getTime() / 1000) <= familyIat
    : current.id === resource.id;
}
