import Joi from 'joi';

export type ResponseMode = 'query' | 'fragment' | 'form_post';

export const RESPONSE_MODES: ResponseMode[] = ['query', 'fragment', 'form_post'];

const str = (description?: string) => (description ? Joi.string().description(description) : Joi.string());

/**
 * The longest value of each parameter a parked sign-in keeps (15 minutes, in the cache): longer is
 * refused with invalid_request naming the parameter, so no request can park more than a few KiB.
 * state carries an app's own context (often a return path), so it gets the most room; a nonce is a
 * random value (OIDC libraries send 16 to 64 characters); login_hint is a username or email address.
 */
export const PARAMETER_MAX_LENGTH = {
  state: 2048,
  nonce: 512,
  login_hint: 256,
  prompt: 64,
  acr_values: 512,
  claims: 4096,
} as const;

/**
 * GET|POST /authorize's parameters (OpenID Connect Core §3.1.2.1), as the OpenAPI document shows them. The
 * checks below read each value rule from here, one parameter at a time, in the order (and with the errors)
 * the OAuth contract fixes; what one parameter's rule cannot say (nonce with an id_token, PKCE with a code)
 * is checked beside it. Unknown parameters are ignored.
 */
export const AUTHORIZE_PARAMETERS = Joi.object({
  response_type: str('code, id_token, id_token token, code id_token, …').required(),
  scope: str('openid, and email, profile; or, with resource, only that resource’s scopes (OAuth 2.0, code)').required(),
  client_id: str().required(),
  redirect_uri: str('Registered for the app, exact match').required(),
  state: str(`At most ${PARAMETER_MAX_LENGTH.state} characters`).max(PARAMETER_MAX_LENGTH.state),
  nonce: str(`Required by the implicit and hybrid flows; at most ${PARAMETER_MAX_LENGTH.nonce} characters`).max(
    PARAMETER_MAX_LENGTH.nonce,
  ),
  response_mode: Joi.string().valid(...RESPONSE_MODES),
  code_challenge: str('PKCE: base64url SHA-256 of the verifier; required from public clients').pattern(
    /^[A-Za-z0-9_-]{43}$/,
  ),
  code_challenge_method: Joi.string().valid('S256').description('Required with code_challenge; plain is refused'),
  prompt: str('none, login, consent').max(PARAMETER_MAX_LENGTH.prompt),
  max_age: str('Seconds since the last sign-in').pattern(/^\d{1,9}$/),
  login_hint: str(`At most ${PARAMETER_MAX_LENGTH.login_hint} characters`).max(PARAMETER_MAX_LENGTH.login_hint),
  request_uri: str('From POST /par (urn:ietf:params:oauth:request_uri:…), with client_id: single use, 60 s'),
  request: str('A request object (RFC 9101) signed with one of the app’s keys: only its parameters count'),
  dpop_jkt: str(
    'DPoP (RFC 9449 §10): the RFC 7638 SHA-256 thumbprint of the key whose proof must come with the code at /token',
  ).pattern(/^[A-Za-z0-9_-]{43}$/),
  acr_values: str(
    `Voluntary: space-separated acr values in order of preference (urn:attest:loa:orb, urn:attest:loa:device); the id_token's acr states the level the person has. At most ${PARAMETER_MAX_LENGTH.acr_values} characters`,
  ).max(PARAMETER_MAX_LENGTH.acr_values),
  claims: str(
    `OIDC Core §5.5: a JSON object with id_token and/or userinfo members, e.g. {"id_token":{"acr":{"essential":true,"values":["urn:attest:loa:orb"]}}}; an essential acr the person does not meet ends with unmet_authentication_requirements. At most ${PARAMETER_MAX_LENGTH.claims} characters`,
  ).max(PARAMETER_MAX_LENGTH.claims),
  resource: str(
    'RFC 8707: the uri of a resource registered here (once); the access token is then a JWT for it alone (aud), carrying the scopes of `scope` it offers',
  ).max(2000),
}).unknown(true);
