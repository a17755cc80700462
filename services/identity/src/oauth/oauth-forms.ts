import Joi from 'joi';
import { AUTHORIZE_PARAMETERS } from '../kernel/authorize-parameters';
import { form, str } from '../kernel/form-schemas';

/** private_key_jwt (RFC 7523 §2.2): an app whose token_endpoint_auth_method is private_key_jwt sends these. */
const CLIENT_ASSERTION_FIELDS = {
  client_assertion_type: Joi.string()
    .valid('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
    .description('private_key_jwt'),
  client_assertion: str(
    'private_key_jwt: a JWT signed with one of the app’s keys (iss = sub = client_id, aud = issuer, jti, exp)',
  ),
};

/** POST /par (RFC 9126): the authorization request's parameters (or a signed `request`), and app authentication. */
export const PAR_FORM = AUTHORIZE_PARAMETERS.keys({
  client_id: str('client_secret_post, private_key_jwt, or a public client'),
  redirect_uri: str('Registered for the app, exact match (inside `request` when one is sent)'),
  response_type: str('code, … (inside `request` when one is sent)'),
  scope: str('openid, … (inside `request` when one is sent)'),
  request: str('A request object (RFC 9101) signed with one of the app’s keys: its parameters replace the others'),
  client_secret: str('client_secret_post'),
  ...CLIENT_ASSERTION_FIELDS,
});

const ACCESS_TOKEN_TYPE = Joi.string().valid('urn:ietf:params:oauth:token-type:access_token');
/** grant_type urn:ietf:params:oauth:grant-type:token-exchange (RFC 8693 §2.1; issue 42, delegation/). */
const TOKEN_EXCHANGE_FIELDS = {
  subject_token: str(
    'token-exchange: the person’s access token (issued to this app, or to another app when this one may act for users)',
  ),
  subject_token_type: ACCESS_TOKEN_TYPE.description('token-exchange: required with subject_token'),
  actor_token: str('token-exchange, optional: the app’s own client_credentials access token'),
  actor_token_type: ACCESS_TOKEN_TYPE.description('token-exchange: required with actor_token'),
  requested_token_type: ACCESS_TOKEN_TYPE.description(
    'token-exchange, optional: access tokens are the one kind issued',
  ),
  audience: str('token-exchange: as resource (the subject token’s resource; any other is invalid_target)'),
};

/** POST /token (RFC 6749 §4.1.3). grant_type, code and redirect_uri are checked after the app's credentials. */
export const TOKEN_FORM = form({
  grant_type: Joi.string()
    .valid('authorization_code')
    .required()
    .description(
      'authorization_code; refresh_token (issue 41: with refresh_token, not code and redirect_uri); client_credentials (with resource, optionally scope); ' +
        'urn:ietf:params:oauth:grant-type:device_code (RFC 8628: with device_code); ' +
        'urn:ietf:params:oauth:grant-type:token-exchange (issue 42: subject_token and subject_token_type, optionally actor_token, resource or audience, scope)',
    ),
  code: str().required(),
  redirect_uri: str().required(),
  refresh_token: str('grant_type refresh_token: the latest refresh token of the family'),
  device_code: str('grant_type urn:ietf:params:oauth:grant-type:device_code: the device_code of /device_authorization'),
  scope: str(
    'refresh_token and token-exchange: a narrower scope (never wider: invalid_scope); client_credentials: scopes the resource offers',
  ),
  code_verifier: str('PKCE; required from public clients'),
  resource: str('RFC 8707: the resource of the authorization request (or absent); any other is invalid_target'),
  client_id: str('client_secret_post, or a public client'),
  client_secret: str('client_secret_post'),
  ...CLIENT_ASSERTION_FIELDS,
  ...TOKEN_EXCHANGE_FIELDS,
});

/** POST /introspect (RFC 7662). */
export const INTROSPECT_FORM = form({ token: str().required(), ...CLIENT_ASSERTION_FIELDS });

/** POST /revoke (RFC 7009). */
export const REVOKE_FORM = form({
  token: str().required(),
  token_type_hint: str('read, not trusted: access tokens are the only kind'),
  ...CLIENT_ASSERTION_FIELDS,
});

/** GET /consent: the sign-in in progress. */
export const INTERACTION_QUERY = form({ interaction: str('The sign-in in progress (from /authorize)') });

/** POST /consent. */
export const CONSENT_FORM = form({
  interaction: str().required(),
  csrf: str().required(),
  decision: Joi.string().valid('approve', 'deny').required(),
});
