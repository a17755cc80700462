import { AppError } from '@attest/common';
import type { App } from '../kernel/app-store';
import { PARAMETER_MAX_LENGTH } from '../kernel/authorize-parameters';
import { parseScopes, type Scope } from '../kernel/scopes';
import type { VerificationLevel } from '../kernel/user-store';
import { givesRefreshToken, parseClaimsParameter, RedirectError, type ClaimsRequest } from '../oauth';
import {
  resourceOfRequest,
  ResourceIndicatorError,
  stricterLevel,
  type BoundResource,
  type ResourceDirectory,
} from '../resources';

/** What a device asked for at /device_authorization, kept until the person decides. */
export interface DeviceRequest {
  /** The OpenID Connect scopes asked (openid gives an id_token). */
  scopes: Scope[];
  /** RFC 8707: the resource, and the scopes asked of it. */
  resource?: BoundResource;
  /** The registered name of the resource, for the page. */
  resourceName?: string;
  /** acr_values, voluntary as at /authorize: the tokens' acr states the level the person has. */
  acrValues?: string[];
  /** The claims parameter (an essential acr is a demand, as at /authorize). */
  claims?: ClaimsRequest;
  /** The stricter of the app's and the resource's minimum verification levels. */
  minLevel?: VerificationLevel;
  /** offline_access was asked: the tokens include a refresh token. */
  offlineAccess?: true;
}

/** The form fields /device_authorization reads (each once: a repeat is refused before this). */
export interface DeviceAuthorizationFields {
  scope?: string;
  resource?: string;
  acr_values?: string;
  claims?: string;
}

/** The longest value of each field (acr_values and claims as at /authorize). */
const MAX_LENGTH = { scope: 2000, acr_values: PARAMETER_MAX_LENGTH.acr_values, claims: PARAMETER_MAX_LENGTH.claims };

/**
 * The device's request, checked as /authorize checks its own: `scope` (openid, profile, email,
 * offline_access, and the scopes of `resource`), `resource` registered here (invalid_target) offering each
 * of its scopes (invalid_scope), `acr_values`, `claims`. A token is for the person (openid) or for a
 * resource: a request with neither is invalid_scope.
 */
export async function deviceRequest(
  resources: Pick<ResourceDirectory, 'findByUri'>,
  app: Pick<App, 'minVerificationLevel' | 'refreshTokenGrant' | 'registration'>,
  fields: DeviceAuthorizationFields,
): Promise<DeviceRequest> {
  for (const [name, max] of Object.entries(MAX_LENGTH))
    if ((fields[name as keyof DeviceAuthorizationFields]?.length ?? 0) > max)
      throw new AppError('invalid_request', 400, `${name} must be at most ${max} characters.`, name);
  const scope = fields.scope ?? '';
  let bound: Awaited<ReturnType<typeof resourceOfRequest>>;
  try {
    bound = await resourceOfRequest(resources, fields.resource, scope);
  } catch (err) {
    if (err instanceof ResourceIndicatorError)
      throw new AppError(err.error, 400, err.description, err.error === 'invalid_target' ? 'resource' : 'scope');
    throw err;
  }
  const scopes = parseScopes(scope);
  if (!bound && !scopes.includes('openid'))
    throw new AppError(
      'invalid_scope',
      400,
      'scope must include openid (to sign the person in), or resource must name the resource the token is for.',
      'scope',
    );
  let claims: ClaimsRequest | undefined;
  try {
    claims = fields.claims === undefined ? undefined : parseClaimsParameter(fields.claims);
  } catch (err) {
    if (err instanceof RedirectError) throw new AppError('invalid_request', 400, err.description, 'claims');
    throw err;
  }
  const acrValues = fields.acr_values?.split(' ').filter(Boolean);
  const minLevel = stricterLevel(app.minVerificationLevel ?? undefined, bound?.minLevel);
  return {
    scopes,
    ...(bound ? { resource: { uri: bound.uri, scopes: bound.scopes, id: bound.id }, resourceName: bound.name } : {}),
    ...(acrValues?.length ? { acrValues } : {}),
    ...(claims ? { claims } : {}),
    ...(minLevel ? { minLevel } : {}),
    ...(givesRefreshToken(app, scope.split(' ')) ? { offlineAccess: true as const } : {}),
  };
}
