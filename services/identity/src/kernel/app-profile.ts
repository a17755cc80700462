import { errors } from '@attest/common';
import type { AppProfile, SigningAlg, TokenEndpointAuthMethod } from './app-store';

/**
 * An app's security profile. fapi2 (FAPI 2.0 Security Profile) is a set of the app's own settings, kept
 * consistent here at registration, plus what only the profile enforces in the flows: PKCE S256 and
 * response_type=code at /authorize and /par (parseAuthorizationRequest), codes living at most
 * FAPI2_CODE_TTL_SECONDS (Grants). none: each setting as it is set.
 */
export type { AppProfile } from './app-store';
export const APP_PROFILES: AppProfile[] = ['none', 'fapi2'];

/**
 * FAPI 2.0 Security Profile §5.4: the only JWS algorithms for a fapi2 app's client assertions, request
 * objects and DPoP proofs (Ed25519 is EdDSA's fully-specified name), and its tokens (PS256 or ES256 here).
 */
export const FAPI2_ALGORITHMS: readonly string[] = ['PS256', 'ES256', 'EdDSA', 'Ed25519'];

/** The problem of a JWT's alg for an app of this profile, or null: a fapi2 app's RS256 is refused. */
export function fapi2AlgorithmProblem(profile: AppProfile, alg: string, what: string): string | null {
  if (profile !== 'fapi2' || FAPI2_ALGORITHMS.includes(alg)) return null;
  return `this app (FAPI 2.0 profile) must sign ${what} with PS256, ES256 or EdDSA; ${alg} is refused.`;
}

/** FAPI 2.0 Security Profile §5.3.2.1: authorization codes live at most 60 seconds. */
export const FAPI2_CODE_TTL_SECONDS = 60;

/** The settings the fapi2 profile fixes (admin API names), each an app setting of its own. */
export interface ProfileSettings {
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  requirePushedAuthorizationRequests: boolean;
  dpopBoundAccessTokens: boolean;
  idTokenSignedResponseAlg: SigningAlg;
  /** Issue 40, item 5: FAPI 2.0 §5.4 allows PS256, ES256 (and EdDSA) only; PS256 unless ES256 is set. */
  accessTokenSignedResponseAlg: SigningAlg;
  redirectUris: string[];
}

/** RFC 8252 §7.3, §8.3: a native app's http redirect goes to a loopback IP literal, never to a host name. */
const LOOPBACK_IPS = new Set(['127.0.0.1', '[::1]']);

/** A redirect URI under fapi2: https, or http on a loopback IP address (a native app); null when fine. */
export function fapi2RedirectUriProblem(value: string): string | null {
  const url = new URL(value); // already checked absolute by the admin schema
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_IPS.has(url.hostname)) return null;
  return (
    `must use https under the fapi2 profile (http only on a loopback IP address, 127.0.0.1 or [::1], ` +
    `for a native app): ${value}`
  );
}

const fapi2Requires = (field: string, what: string) =>
  errors.invalidParameter(field, `The fapi2 profile requires ${what}; set profile none first to change it.`);

/**
 * The settings an app ends with under `profile`: those given, then, for fapi2, what the profile fixes
 * where nothing was given (private_key_jwt, PAR required, DPoP required, PS256 unless ES256 is set). A
 * setting given against the profile is refused (400 invalid_parameter naming it), as is an http
 * redirect URI other than a loopback IP's. `current` is the app as it is (the defaults, for a new app).
 */
export function settingsUnderProfile(
  profile: AppProfile,
  given: Partial<ProfileSettings>,
  current: ProfileSettings,
): ProfileSettings {
  const merged: ProfileSettings = {
    tokenEndpointAuthMethod: given.tokenEndpointAuthMethod ?? current.tokenEndpointAuthMethod,
    requirePushedAuthorizationRequests:
      given.requirePushedAuthorizationRequests ?? current.requirePushedAuthorizationRequests,
    dpopBoundAccessTokens: given.dpopBoundAccessTokens ?? current.dpopBoundAccessTokens,
    idTokenSignedResponseAlg: given.idTokenSignedResponseAlg ?? current.idTokenSignedResponseAlg,
    accessTokenSignedResponseAlg: given.accessTokenSignedResponseAlg ?? current.accessTokenSignedResponseAlg,
    redirectUris: given.redirectUris ?? current.redirectUris,
  };
  if (profile !== 'fapi2') return merged;
  if (given.tokenEndpointAuthMethod === undefined && current.tokenEndpointAuthMethod === 'none')
    throw errors.invalidParameter(
      'profile',
      'A public client (token_endpoint_auth_method none) cannot take the fapi2 profile: it needs private_key_jwt.',
    );
  if (given.tokenEndpointAuthMethod !== undefined && given.tokenEndpointAuthMethod !== 'private_key_jwt')
    throw fapi2Requires(
      'token_endpoint_auth_method',
      'token_endpoint_auth_method private_key_jwt (client secrets and public clients are refused)',
    );
  if (given.requirePushedAuthorizationRequests === false)
    throw fapi2Requires(
      'require_pushed_authorization_requests',
      'require_pushed_authorization_requests true (every sign-in pushed to /par)',
    );
  if (given.dpopBoundAccessTokens === false)
    throw fapi2Requires('dpop_bound_access_tokens', 'dpop_bound_access_tokens true (DPoP-bound tokens only)');
  if (given.idTokenSignedResponseAlg === 'RS256')
    throw fapi2Requires('id_token_signed_response_alg', 'id_token_signed_response_alg PS256 or ES256');
  if (given.accessTokenSignedResponseAlg === 'RS256')
    throw fapi2Requires(
      'access_token_signed_response_alg',
      'access_token_signed_response_alg PS256 or ES256 (FAPI 2.0 §5.4 refuses RS256)',
    );
  for (const uri of merged.redirectUris) {
    const problem = fapi2RedirectUriProblem(uri);
    if (problem) throw errors.invalidParameter('redirect_uris', `redirect_uris ${problem}`);
  }
  return {
    ...merged,
    tokenEndpointAuthMethod: 'private_key_jwt',
    requirePushedAuthorizationRequests: true,
    dpopBoundAccessTokens: true,
    idTokenSignedResponseAlg: merged.idTokenSignedResponseAlg === 'RS256' ? 'PS256' : merged.idTokenSignedResponseAlg,
    accessTokenSignedResponseAlg:
      merged.accessTokenSignedResponseAlg === 'RS256' ? 'PS256' : merged.accessTokenSignedResponseAlg,
  };
}
