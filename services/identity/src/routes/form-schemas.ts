import Joi from 'joi';
import { AUTHORIZE_PARAMETERS } from '../domain/authorization-request';

/**
 * The forms and query strings of the identity endpoints, one joi schema each: the routes check requests
 * with them (form-check.ts) and the OpenAPI document (openapi-document.ts) shows the same objects.
 * Fields are checked in the order they are declared here. Every form accepts fields it does not name
 * (`unknown`): OAuth ignores unrecognised parameters, and so do the pages.
 */

const str = (description?: string) => (description ? Joi.string().description(description) : Joi.string());
const form = (fields: Record<string, Joi.Schema>) => Joi.object(fields).unknown(true);

/** GET|POST /authorize: the rules of an authorization request live beside its parser. */
export { AUTHORIZE_PARAMETERS };

/** GET|POST /logout (checked by domain/logout-request.ts). */
export const LOGOUT_PARAMETERS = form({
  id_token_hint: str('An ID token this provider issued'),
  client_id: str(),
  post_logout_redirect_uri: str('Registered for the app, exact match'),
  state: str(),
  ui_locales: str(),
  logout_hint: str(),
});

/** POST /logout/confirm, the confirmation page's form. */
export const LOGOUT_CONFIRM_FORM = form({
  csrf: str().required(),
  decision: Joi.string().valid('logout', 'stay').required(),
  client_id: str(),
  post_logout_redirect_uri: str(),
  state: str(),
});

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

/** POST /token (RFC 6749 §4.1.3). grant_type, code and redirect_uri are checked after the app's credentials. */
export const TOKEN_FORM = form({
  grant_type: Joi.string().valid('authorization_code').required(),
  code: str().required(),
  redirect_uri: str().required(),
  code_verifier: str('PKCE; required from public clients'),
  client_id: str('client_secret_post, or a public client'),
  client_secret: str('client_secret_post'),
  ...CLIENT_ASSERTION_FIELDS,
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

const TARGET_FIELDS = {
  interaction: str('The sign-in in progress (from /authorize)'),
  next: Joi.string().valid('account').description('Sign in to the account page rather than to an app'),
};

/** GET /signin and /signup: the sign-in in progress, or the account page (signin-target.ts). */
export const SIGNIN_QUERY = form(TARGET_FIELDS);

/**
 * The longest username /signin looks up (the longest an operator can create): failures are counted per
 * (username, address), so a longer one is refused before it is counted, and never becomes a stored key.
 */
export const SIGNIN_USERNAME_MAX_LENGTH = 200;

/** A username of an account created at /signup, once trimmed. */
export const USERNAME = /^[A-Za-z0-9._@+-]{3,64}$/;

const PASSKEY_FIELDS = {
  ceremony: str('The passkey ceremony id the page was given'),
  credential: str('The WebAuthn response, JSON'),
};

/** POST /signin: a password, or a passkey (method=passkey). */
export const SIGNIN_FORM = form({
  ...TARGET_FIELDS,
  csrf: str('The page’s CSRF token').required(),
  method: str('passkey: sign in with ceremony and credential; otherwise with username and password'),
  username: str(`At most ${SIGNIN_USERNAME_MAX_LENGTH} characters`).trim().max(SIGNIN_USERNAME_MAX_LENGTH),
  password: str(),
  ...PASSKEY_FIELDS,
});

/** POST /signup: step 1 a username and name, step 2 (step=passkey) the new passkey. */
export const SIGNUP_FORM = form({
  ...TARGET_FIELDS,
  csrf: str('The page’s CSRF token').required(),
  step: str('passkey: the second step, with ceremony and credential; otherwise the first'),
  username: str('3 to 64 letters, digits or . _ - @ +, trimmed; required in the first step').trim().pattern(USERNAME),
  name: str('Optional; trimmed, the first 200 characters kept').trim(),
  ...PASSKEY_FIELDS,
});

/** POST /consent. */
export const CONSENT_FORM = form({
  interaction: str().required(),
  csrf: str().required(),
  decision: Joi.string().valid('approve', 'deny').required(),
});

/** GET /account. */
export const ACCOUNT_QUERY = form({ notice: str('What the last form did') });

const accountForm = (fields: Record<string, Joi.Schema>) =>
  form({ csrf: str('The page’s CSRF token').required(), ...fields });

/** The account page's forms (POST /account/…). */
export const ACCOUNT_FORMS = {
  withdrawConsent: accountForm({ app_id: str().required() }),
  addPasskey: accountForm({ name: str(), ...PASSKEY_FIELDS }),
  removePasskey: accountForm({ passkey_id: str().required() }),
  changePassword: accountForm({
    current_password: str().required(),
    new_password: str('8 to 1024 characters').min(8).max(1024).required(),
    confirm_password: str().required(),
  }),
  endSession: accountForm({ session_id: str().required() }),
  endOtherSessions: accountForm({}),
};
