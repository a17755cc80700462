import Joi from 'joi';
import { pageQuery } from '@attest/common';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** https, or http on a loopback host for development; absolute, no fragment. */
export function redirectUriProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.hash || value.includes('#')) return 'must not contain a fragment';
  // a user name or password in it would send what the app gets to a host the person cannot read off the link
  if (url.username || url.password) return 'must not contain a user name or password (user:password@)';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return null;
  return 'must use https (http is allowed only on localhost, 127.0.0.1 or [::1])';
}

const redirectUri = Joi.string()
  .max(2000)
  .custom((value: string, helpers) => {
    const problem = redirectUriProblem(value);
    return problem ? helpers.message({ custom: `redirect_uris ${problem}: ${value}` }) : value;
  });

/** An origin as browsers send it: scheme://host[:port], https or http on a loopback host. */
export function webOriginProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an origin such as https://app.example.com';
  }
  if (url.origin !== value) return `must be an origin, without path or trailing slash (${url.origin})`;
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname))) return null;
  return 'must use https (http is allowed only on localhost, 127.0.0.1 or [::1])';
}

const webOrigin = Joi.string()
  .max(500)
  .custom((value: string, helpers) => {
    const problem = webOriginProblem(value);
    return problem ? helpers.message({ custom: `web_origins ${problem}: ${value}` }) : value;
  });
const webOrigins = Joi.array().items(webOrigin).max(50).unique();

const appUri = (field: string) =>
  Joi.string()
    .max(2000)
    .custom((value: string, helpers) => {
      const problem = redirectUriProblem(value);
      return problem ? helpers.message({ custom: `${field} ${problem}: ${value}` }) : value;
    });

const appName = Joi.string().trim().min(1).max(200);
const redirectUris = Joi.array().items(redirectUri).min(1).max(50).unique();

/** RP-Initiated and Back-Channel Logout registration (OpenID Connect client metadata names). */
const logoutSettings = {
  post_logout_redirect_uris: Joi.array().items(appUri('post_logout_redirect_uris')).max(50).unique(),
  backchannel_logout_uri: appUri('backchannel_logout_uri').allow(null),
};

/** A public JWK Set (checked further by clientJwksProblem): at most 20 keys. */
const jwks = Joi.object({
  keys: Joi.array()
    .items(Joi.object({ kty: Joi.string().required() }).unknown(true))
    .min(1)
    .max(20)
    .required(),
}).allow(null);

/**
 * Key-based client authentication, signed and pushed requests, the id_token algorithm (issue 24). Each is
 * its own setting, so a profile (FAPI 2.0) can be a set of them.
 */
const assuranceSettings = {
  jwks,
  jwks_uri: Joi.string().max(2000).allow(null),
  require_pushed_authorization_requests: Joi.boolean().strict(),
  id_token_signed_response_alg: Joi.string().valid('RS256', 'PS256', 'ES256'),
  access_token_signed_response_alg: Joi.string()
    .valid('RS256', 'PS256', 'ES256')
    .description('The access tokens’ signing algorithm: RS256 by default; PS256 (its default) or ES256 under fapi2'),
};
/** RFC 9449 §5.2 client metadata: DPoP required at /token (every access token sender-constrained). */
const dpopBoundAccessTokens = Joi.boolean()
  .strict()
  .description('DPoP required: /token refuses a request without a DPoP proof (RFC 9449 §5.2)');

/** Issue 42: the operator lets the app act for people (RFC 8693 token exchange of another app's token). */
const mayActForUsers = Joi.boolean()
  .strict()
  .description(
    'The app (an agent) may exchange a person’s access token issued to another app for a short-lived token ' +
      'that acts for that person (RFC 8693 token exchange, act claim)',
  );

/** The lowest verification level /authorize lets through for the app; none (or null): no minimum. */
const minVerificationLevel = Joi.string()
  .valid('orb', 'device', 'none')
  .allow(null)
  .description('orb or device: /authorize refuses people below it (unmet_authentication_requirements); none clears it');

/** RFC 8628 (issue 41): the app may use the device flow (/device_authorization, the device_code grant). */
const deviceAuthorizationGrant = Joi.boolean()
  .strict()
  .description(
    'The Device Authorization Grant (RFC 8628): /device_authorization and grant_type ' +
      'urn:ietf:params:oauth:grant-type:device_code at /token, for a public or a confidential app; off by default',
  );

/** A bundle of settings the app keeps consistent, and what the flows enforce beyond them (app-profile.ts). */
const profile = Joi.string()
  .valid('none', 'fapi2')
  .description(
    'fapi2: the FAPI 2.0 Security Profile — PAR, PKCE S256, response_type=code, DPoP, private_key_jwt, codes ' +
      'living at most 60 s, https redirect URIs (http only on 127.0.0.1 or [::1]), a PS256 or ES256 id_token; ' +
      'settings not given are set to what it requires, and one given against it is refused. none: each setting as set',
  );

/** CIBA (issue 42, CIBA Core §4 client metadata): how the app learns a backchannel request's outcome. */
const cibaSettings = {
  backchannel_token_delivery_mode: Joi.string()
    .valid('poll', 'ping')
    .allow(null)
    .description(
      'CIBA: poll (the app asks /token) or ping (a POST to its notification endpoint, then /token); null: no CIBA (and no endpoint, unless one is given)',
    ),
  backchannel_client_notification_endpoint: Joi.string()
    .max(2000)
    .allow(null)
    .description('CIBA ping mode: where {auth_req_id} is POSTed once the person decided (https; the outbound guard)'),
};

export const createAppSchema = Joi.object({
  name: appName.required(),
  redirect_uris: redirectUris.required(),
  token_endpoint_auth_method: Joi.string()
    .valid('client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none')
    .default('client_secret_basic')
    .description('private_key_jwt when not given under the fapi2 profile'),
  web_origins: webOrigins.default([]),
  dpop_bound_access_tokens: dpopBoundAccessTokens.default(false),
  may_act_for_users: mayActForUsers.default(false),
  min_verification_level: minVerificationLevel,
  device_authorization_grant: deviceAuthorizationGrant.default(false),
  profile: profile.default('none'),
  ...logoutSettings,
  ...assuranceSettings,
  ...cibaSettings,
}).oxor('jwks', 'jwks_uri');

/** PATCH /admin/apps/{id}: any of these; a field added to apps is one line here and one in app-store. */
export const updateAppSchema = Joi.object({
  name: appName,
  redirect_uris: redirectUris,
  web_origins: webOrigins,
  dpop_bound_access_tokens: dpopBoundAccessTokens,
  may_act_for_users: mayActForUsers,
  min_verification_level: minVerificationLevel,
  device_authorization_grant: deviceAuthorizationGrant,
  profile,
  ...logoutSettings,
  token_endpoint_auth_method: Joi.string().valid('client_secret_basic', 'client_secret_post', 'private_key_jwt'),
  ...assuranceSettings,
  ...cibaSettings,
}).min(1);

const password = Joi.string().min(8).max(1024).messages({ 'string.min': 'password must be at least 8 characters' });
const personName = Joi.string().trim().max(200).allow(null);

export const createUserSchema = Joi.object({
  username: Joi.string().trim().min(1).max(200).required(),
  password: password.required(),
  verification_level: Joi.string().valid('orb', 'device').required(),
  name: personName,
  given_name: personName,
  family_name: personName,
});

export const updateUserSchema = Joi.object({
  verification_level: Joi.string().valid('orb', 'device'),
  name: personName,
  given_name: personName,
  family_name: personName,
}).min(1);

/** A new password, or none to have one generated (returned once). */
export const resetPasswordSchema = Joi.object({ password });

/** POST /admin/keys/rotate: `revoke_previous` for an emergency (a key may be compromised). */
export const rotateKeySchema = Joi.object({
  revoke_previous: Joi.boolean()
    .strict()
    .description(
      'Also take every earlier key out of the JWKS at once: the tokens they signed are refused on every replica',
    ),
});

/** PUT /admin/apps/{id}/members: a person (by username) and their role on the app's team. */
export const putMemberSchema = Joi.object({
  username: Joi.string().trim().min(1).max(200).required(),
  role: Joi.string().valid('owner', 'developer', 'viewer').required(),
});

export const appListQuery = Joi.object({
  ...pageQuery,
  cursor: Joi.string()
    .pattern(/^app_[0-9a-f]{32}$/)
    .messages({ 'string.pattern.base': 'cursor must be the next_cursor of a previous page' }),
});

export const userListQuery = Joi.object({
  ...pageQuery,
  username: Joi.string().max(200),
  cursor: Joi.string()
    .pattern(/^[A-Za-z0-9_-]{1,300}$/)
    .messages({ 'string.pattern.base': 'cursor must be the next_cursor of a previous page' }),
});
