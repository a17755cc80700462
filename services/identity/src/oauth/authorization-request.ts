import { AppError } from '@attest/common';
import type { App, AppRegistration } from '../kernel/app-store';
import { isClientId } from '../kernel/ids';
import type { VerificationLevel } from '../kernel/user-store';
import type { AppProfile } from '../kernel/app-profile';
import { essentialAcr, parseClaimsParameter, scopesOfClaims, type ClaimsRequest } from './assurance';
import { RedirectError, redirectErrors } from './oauth-error';
import { parseScopes, type Scope } from '../kernel/scopes';
import { resourceOfRequest, ResourceIndicatorError, stricterLevel, type BoundResource } from '../resources';
import {
  AUTHORIZE_PARAMETERS,
  PARAMETER_MAX_LENGTH,
  RESPONSE_MODES,
  type ResponseMode,
} from '../kernel/authorize-parameters';

export { AUTHORIZE_PARAMETERS, PARAMETER_MAX_LENGTH, RESPONSE_MODES, type ResponseMode };

export type Prompt = 'none' | 'login' | 'consent';

export const RESPONSE_TYPES = [
  'code',
  'id_token',
  'id_token token',
  'code id_token',
  'code token',
  'code id_token token',
] as const;

type AuthorizeParameter =
  | 'response_type'
  | 'scope'
  | 'client_id'
  | 'redirect_uri'
  | 'response_mode'
  | 'code_challenge'
  | 'code_challenge_method'
  | 'max_age'
  | 'dpop_jkt';

/** Whether AUTHORIZE_PARAMETERS refuses this value (absent or empty included, for a required parameter). */
const refused = (name: AuthorizeParameter, value: string | undefined): boolean =>
  AUTHORIZE_PARAMETERS.extract(name).validate(value).error !== undefined;

export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  /** Normalised, e.g. "code id_token". */
  responseType: string;
  responseMode: ResponseMode;
  scopes: Scope[];
  state?: string;
  nonce?: string;
  codeChallenge?: string;
  prompt: Prompt[];
  maxAge?: number;
  loginHint?: string;
  /** The app's id_token_signed_response_alg, when not RS256. */
  idTokenAlg?: 'PS256' | 'ES256';
  /** The app's access_token_signed_response_alg, when not RS256 (tokens from /authorize). */
  accessTokenAlg?: 'PS256' | 'ES256';
  /** RFC 9449 §10: the code is redeemed only with a DPoP proof by the key of this thumbprint. */
  dpopJkt?: string;
  /** acr_values, voluntary (the id_token's acr states the level the person has). */
  acrValues?: string[];
  /** The claims parameter, validated. */
  claims?: ClaimsRequest;
  /** The app's minimum verification level when the request was made. */
  minLevel?: VerificationLevel;
  /** The app's profile, when not none: fapi2 codes live at most FAPI2_CODE_TTL_SECONDS. */
  profile?: 'fapi2';
  /** RFC 8707: the resource the tokens are for, and the scopes asked for it (bindResource). */
  resource?: BoundResource;
  /** The registered name of `resource`, for the consent page. */
  resourceName?: string;
  /** offline_access in scope (issue 41): the code's exchange gives a refresh token. */
  offlineAccess?: true;
}

/** Where an error for this request goes once the client and redirect URI are known. */
export interface ErrorTarget {
  redirectUri: string;
  responseMode: ResponseMode;
  state?: string;
}

export type Params = Record<string, string | undefined>;

const ORDER = ['code', 'id_token', 'token'];
const one = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function normaliseResponseType(value: string): string {
  return value
    .split(' ')
    .filter(Boolean)
    .sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b))
    .join(' ');
}

export const defaultResponseMode = (responseType: string): ResponseMode =>
  responseType === 'code' ? 'query' : 'fragment';

export const pageError = {
  required: (attribute: string) => new AppError('required', 400, 'This attribute is required.', attribute),
  invalidClient: () => new AppError('invalid_client', 400, 'Unknown or disabled client_id.', 'client_id'),
  invalidRedirectUri: () => new AppError('invalid_redirect_uri', 400, 'Invalid redirect_uri provided.', 'redirect_uri'),
  duplicate: (attribute: string) =>
    new AppError('invalid_request', 400, `The ${attribute} parameter must be given once.`, attribute),
};

/** Step 1: the client and redirect URI. Failures here are shown on a page, never redirected. */
export async function identifyClient(
  params: Params,
  apps: { find(id: string, from?: string): Promise<App | null> },
  from?: string,
): Promise<{ app: App; redirectUri: string }> {
  const clientId = params.client_id;
  const redirectUri = params.redirect_uri;
  if (refused('client_id', clientId)) throw pageError.required('client_id');
  if (refused('redirect_uri', redirectUri)) throw pageError.required('redirect_uri');
  const app = isClientId(clientId!) ? await apps.find(clientId!, from) : null;
  if (!app || app.disabledAt) throw pageError.invalidClient();
  if (!app.redirectUris.includes(redirectUri!)) throw pageError.invalidRedirectUri();
  return { app, redirectUri: redirectUri! };
}

/** The response mode an error should use, even when the request itself is malformed. */
export function errorTarget(params: Params, redirectUri: string): ErrorTarget {
  const type = normaliseResponseType(params.response_type ?? '');
  const asked = params.response_mode as ResponseMode | undefined;
  const fallback = type === '' || type === 'code' ? 'query' : 'fragment';
  const mode =
    asked && RESPONSE_MODES.includes(asked) && !(asked === 'query' && fallback === 'fragment') ? asked : fallback;
  // a state over its limit is the error itself: it is not carried back (a Location header has limits too)
  const state =
    params.state !== undefined && params.state.length <= PARAMETER_MAX_LENGTH.state ? params.state : undefined;
  return { redirectUri, responseMode: mode, state };
}

/** A public client (no secret) may use only the code flow, and only with PKCE S256 (RFC 8252 §8.1, RFC 9700). */
function checkPublicClient(responseType: string, codeChallenge: string | undefined): void {
  if (responseType !== 'code')
    throw redirectErrors.unauthorizedClient('A public client may use only response_type=code.');
  if (!codeChallenge)
    throw redirectErrors.invalidRequest(
      'A public client must send code_challenge with code_challenge_method=S256 (PKCE).',
    );
}

/**
 * FAPI 2.0 Security Profile §5.3.1.2: the code flow only, with PKCE S256 (plain is refused for everyone);
 * PAR, DPoP and private_key_jwt are the app's own settings, which the profile keeps set.
 */
function checkFapi2(responseType: string, codeChallenge: string | undefined): void {
  if (responseType !== 'code')
    throw redirectErrors.unauthorizedClient('This app (FAPI 2.0 profile) may use only response_type=code.');
  if (!codeChallenge)
    throw redirectErrors.invalidRequest(
      'This app (FAPI 2.0 profile) must send code_challenge with code_challenge_method=S256 (PKCE).',
    );
}

/** Step 2: everything else, as a list of small checks; failures go back to the redirect URI. */
export function parseAuthorizationRequest(
  params: Params,
  clientId: string,
  redirectUri: string,
  client: {
    public: boolean;
    idTokenSignedResponseAlg?: string;
    accessTokenSignedResponseAlg?: string;
    dpopBoundAccessTokens?: boolean;
    minVerificationLevel?: VerificationLevel | null;
    profile?: AppProfile;
    /** Who made the client: a self-registered one's grant_types say whether it gets refresh tokens. */
    registration?: AppRegistration;
    /** A self-registered client whose grant_types include refresh_token: its code's exchange gives one. */
    refreshTokenGrant?: boolean;
  } = { public: false },
): AuthorizationRequest {
  for (const p of ['request', 'request_uri'] as const)
    if (params[p] !== undefined) throw redirectErrors.requestNotSupported(p);
  for (const [p, max] of Object.entries(PARAMETER_MAX_LENGTH))
    if ((params[p]?.length ?? 0) > max) throw redirectErrors.invalidRequest(`${p} must be at most ${max} characters.`);
  if (refused('response_type', params.response_type)) throw redirectErrors.invalidRequest('response_type is required.');
  const responseType = normaliseResponseType(params.response_type!);
  if (!(RESPONSE_TYPES as readonly string[]).includes(responseType))
    throw redirectErrors.unsupportedResponseType(params.response_type!);

  let responseMode = defaultResponseMode(responseType);
  if (params.response_mode !== undefined) {
    if (refused('response_mode', params.response_mode))
      throw redirectErrors.invalidRequest(`response_mode '${params.response_mode}' is not supported.`);
    if (params.response_mode === 'query' && responseType !== 'code')
      throw redirectErrors.invalidRequest('response_mode query is only supported for the authorization code flow.');
    responseMode = params.response_mode as ResponseMode;
  }

  if (refused('scope', params.scope)) throw redirectErrors.invalidRequest('scope is required.');
  const requested = params.scope!.split(' ').filter(Boolean);
  // RFC 8707: a token for a resource alone is an OAuth 2.0 request (no id_token), as MCP clients send it
  if (!requested.includes('openid')) {
    if (params.resource === undefined)
      throw redirectErrors.invalidScope(
        'scope must include openid (to sign the person in), or resource must name the resource the token is for.',
      );
    if (responseType !== 'code')
      throw redirectErrors.invalidScope(
        `response_type ${responseType} returns an id_token: scope must include openid.`,
      );
    // what only an id_token or /userinfo gives: never consented to where neither comes
    const oidcOnly = requested.find((s) => s === 'email' || s === 'profile');
    if (oidcOnly !== undefined)
      throw redirectErrors.invalidScope(
        `${oidcOnly} comes with openid (an id_token, /userinfo): add openid or leave it out.`,
      );
    if (params.claims !== undefined)
      throw redirectErrors.invalidRequest(
        'claims asks for an id_token’s or /userinfo’s claims: it needs openid in scope.',
      );
  }
  const scopes = parseScopes(params.scope!);

  if (responseType.includes('id_token') && !params.nonce)
    throw redirectErrors.invalidRequest(
      'nonce is required when an id_token is returned from the authorization endpoint.',
    );

  let codeChallenge: string | undefined;
  if (params.code_challenge !== undefined || params.code_challenge_method !== undefined) {
    if (!responseType.includes('code'))
      throw redirectErrors.invalidRequest('PKCE applies only to response types that include code.');
    if (params.code_challenge === undefined)
      throw redirectErrors.invalidRequest('code_challenge is required with code_challenge_method.');
    if (params.code_challenge_method === undefined || refused('code_challenge_method', params.code_challenge_method))
      throw redirectErrors.invalidRequest('code_challenge_method must be S256 (plain is not supported).');
    if (refused('code_challenge', params.code_challenge))
      throw redirectErrors.invalidRequest('code_challenge must be a base64url SHA-256 value (43 characters).');
    codeChallenge = params.code_challenge;
  }

  if (client.public) checkPublicClient(responseType, codeChallenge);
  if (client.profile === 'fapi2') checkFapi2(responseType, codeChallenge);
  // its access tokens are DPoP-bound, which one from the authorization endpoint cannot be (RFC 9449 §5)
  if (client.dpopBoundAccessTokens && responseType.split(' ').includes('token'))
    throw redirectErrors.unauthorizedClient(
      'This app requires DPoP-bound access tokens: use a response_type without token, and get them at /token.',
    );

  if (params.dpop_jkt !== undefined) {
    if (!responseType.includes('code'))
      throw redirectErrors.invalidRequest('dpop_jkt applies only to response types that include code.');
    if (refused('dpop_jkt', params.dpop_jkt))
      throw redirectErrors.invalidRequest('dpop_jkt must be a base64url SHA-256 JWK thumbprint (43 characters).');
  }

  const prompt = [...new Set((params.prompt ?? '').split(' ').filter(Boolean))] as Prompt[];
  if (prompt.some((p) => !['none', 'login', 'consent'].includes(p)))
    throw redirectErrors.invalidRequest('prompt may hold only none, login and consent.');
  if (prompt.includes('none') && prompt.length > 1)
    throw redirectErrors.invalidRequest('prompt=none cannot be combined with other values.');

  let maxAge: number | undefined;
  if (params.max_age !== undefined) {
    if (refused('max_age', params.max_age))
      throw redirectErrors.invalidRequest('max_age must be a non-negative integer.');
    maxAge = Number(params.max_age);
  }

  const claims = params.claims === undefined ? undefined : parseClaimsParameter(params.claims);
  const acrValues = params.acr_values?.split(' ').filter(Boolean);
  const withClaimScopes = claims ? parseScopes([...scopes, ...scopesOfClaims(claims)].join(' ')) : scopes;

  return {
    clientId,
    redirectUri,
    responseType,
    responseMode,
    scopes: withClaimScopes,
    state: params.state,
    nonce: params.nonce,
    codeChallenge,
    prompt,
    maxAge,
    loginHint: params.login_hint,
    ...(client.idTokenSignedResponseAlg === 'PS256' || client.idTokenSignedResponseAlg === 'ES256'
      ? { idTokenAlg: client.idTokenSignedResponseAlg }
      : {}),
    ...(client.accessTokenSignedResponseAlg === 'PS256' || client.accessTokenSignedResponseAlg === 'ES256'
      ? { accessTokenAlg: client.accessTokenSignedResponseAlg }
      : {}),
    ...(params.dpop_jkt === undefined ? {} : { dpopJkt: params.dpop_jkt }),
    ...(acrValues?.length ? { acrValues } : {}),
    ...(claims ? { claims } : {}),
    ...(client.minVerificationLevel ? { minLevel: client.minVerificationLevel } : {}),
    ...(client.profile === 'fapi2' ? { profile: 'fapi2' as const } : {}),
    ...(responseType.includes('code') && givesRefreshToken(client, requested) ? { offlineAccess: true as const } : {}),
  };
}

/**
 * RFC 8707 at /authorize and /par: the request's `resource`, registered, with the scopes asked for it, and
 * the stricter of the app's and the resource's minimum levels. Without `resource`, the request unchanged.
 */
export async function bindResource(
  resources: Parameters<typeof resourceOfRequest>[0],
  request: AuthorizationRequest,
  params: Params,
): Promise<AuthorizationRequest> {
  try {
    const bound = await resourceOfRequest(resources, params.resource, params.scope);
    if (!bound) return request;
    const minLevel = stricterLevel(request.minLevel, bound.minLevel);
    return {
      ...request,
      resource: { uri: bound.uri, scopes: bound.scopes, id: bound.id },
      // what the consent page calls it (issue 41, item 4)
      resourceName: bound.name,
      ...(minLevel ? { minLevel } : {}),
    };
  } catch (err) {
    if (err instanceof ResourceIndicatorError) throw new RedirectError(err.error, err.description);
    throw err;
  }
}

/** What the request demands of the person's verification level, if anything (the hot path skips the check). */
export const demandOf = (request: AuthorizationRequest) => {
  const acr = essentialAcr(request.claims);
  return acr || request.minLevel ? { acr, minLevel: request.minLevel } : null;
};

/** Query or form parameters as single strings; a parameter sent twice is refused (RFC 6749 §3.1). */
export function singleParams(source: Record<string, unknown>): { params: Params; duplicate?: string } {
  const params: Params = {};
  for (const [key, value] of Object.entries(source)) {
    if (Array.isArray(value)) return { params, duplicate: key };
    const v = one(value);
    if (v !== undefined) params[key] = v;
  }
  return { params };
}

/**
 * Whether a grant gives a refresh token (issue 41): a self-registered client (RFC 7591, a metadata
 * document) exactly when its grant_types include refresh_token (offline_access alone is ignored, RFC 6749
 * §3.3: the client limited itself); an operator's app when it asks offline_access.
 */
export function givesRefreshToken(
  client: { registration?: AppRegistration; refreshTokenGrant?: boolean },
  requested: readonly string[],
): boolean {
  if (client.registration && client.registration !== 'operator') return client.refreshTokenGrant === true;
  return requested.includes('offline_access');
}
