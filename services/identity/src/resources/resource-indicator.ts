import type { VerificationLevel } from '../kernel/user-store';
import type { ResourceDirectory } from './resource-directory';
import { RESERVED_SCOPES } from './resource-schemas';

/** The resource a grant is bound to (RFC 8707): its uri (the tokens' `aud`) and the scopes granted for it. */
export interface BoundResource {
  uri: string;
  scopes: string[];
  /**
   * The resource_id of the resource it was granted for: a resource deleted and registered again with the
   * same uri is another, and a refresh token of the old one is refused (refreshGrantHolds). Absent in a
   * grant made before it was kept.
   */
  id?: string;
}

/** RFC 8707 §2 (invalid_target) or RFC 6749 §5.2 (invalid_scope): the endpoint answers in its own way. */
export class ResourceIndicatorError extends Error {
  constructor(
    readonly error: 'invalid_target' | 'invalid_scope',
    readonly description: string,
  ) {
    super(description);
  }
}

const RANK: Record<VerificationLevel, number> = { device: 1, orb: 2 };

/** The stricter of two minimum levels. */
export const stricterLevel = (
  a: VerificationLevel | undefined,
  b: VerificationLevel | null | undefined,
): VerificationLevel | undefined => (!b ? a : !a || RANK[b] > RANK[a] ? b : a);

/** A repeated `resource`: one resource per request here, so its token has one audience. */
export const oneResourceOnly = () =>
  new ResourceIndicatorError(
    'invalid_target',
    'Send one resource per request: a token here is bound to a single resource (RFC 8707).',
  );

/**
 * The resource an authorization request (at /authorize or /par) names, and the scopes asked for it: the
 * scopes of `scope` that are not OpenID Connect's (openid, profile, email, offline_access) must each be
 * one the resource offers (invalid_scope otherwise); an unregistered resource is invalid_target. Null
 * without `resource` (the request is as it has always been). `minLevel` is the resource's minimum.
 */
export async function resourceOfRequest(
  resources: Pick<ResourceDirectory, 'findByUri'>,
  uri: string | undefined,
  scope: string | undefined,
): Promise<(Required<BoundResource> & { name: string; minLevel: VerificationLevel | null }) | null> {
  if (uri === undefined) return null;
  const resource = uri.length <= 2000 ? await resources.findByUri(uri) : null;
  if (!resource)
    throw new ResourceIndicatorError(
      'invalid_target',
      'resource names no resource registered here (an absolute URI, exactly as registered).',
    );
  const asked = [...new Set((scope ?? '').split(' ').filter((s) => s && !RESERVED_SCOPES.includes(s)))];
  const unknown = asked.find((s) => !resource.scopes.includes(s));
  if (unknown !== undefined)
    throw new ResourceIndicatorError(
      'invalid_scope',
      `The resource ${resource.uri} does not offer the scope ${unknown}` +
        (resource.scopes.length ? ` (it offers: ${resource.scopes.join(' ')}).` : ' (it offers none).'),
    );
  return {
    id: resource.id,
    uri: resource.uri,
    name: resource.name,
    scopes: resource.scopes.filter((s) => asked.includes(s)),
    minLevel: resource.minVerificationLevel,
  };
}

/**
 * The resource a token request names, against the grant's (RFC 8707 §2.2): absent, the grant's own;
 * present, it must be the grant's (a grant is bound to one resource, and never widens).
 */
export function resourceAtToken(
  granted: BoundResource | undefined,
  uri: string | undefined,
): BoundResource | undefined {
  if (uri === undefined) return granted;
  if (!granted || granted.uri !== uri)
    throw new ResourceIndicatorError(
      'invalid_target',
      granted
        ? `resource must be ${granted.uri}, the resource this grant was made for.`
        : 'This grant was made without a resource: a token for one needs an authorization request with it.',
    );
  return granted;
}
