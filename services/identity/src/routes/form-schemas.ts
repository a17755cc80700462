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

/** The developer portal's forms (POST /portal/…): each carries the portal session's CSRF token. */
const portalForm = (fields: Record<string, Joi.Schema>) => form({ csrf: str().required(), ...fields });
export const PORTAL_FORMS = {
  signOut: portalForm({}),
  createApp: portalForm({
    name: str('The app’s name').required(),
    redirect_uri: str('Its first redirect URI').required(),
    kind: Joi.string().valid('confidential', 'public').description('public: a single-page or native app'),
  }),
  settings: portalForm({
    name: str(),
    redirect_uris: str('One per line'),
    post_logout_redirect_uris: str('One per line'),
    backchannel_logout_uri: str('Empty: none').allow(''),
    web_origins: str('One per line').allow(''),
    min_verification_level: Joi.string().valid('none', 'device', 'orb'),
    id_token_signed_response_alg: Joi.string().valid('RS256', 'PS256', 'ES256'),
    dpop_bound_access_tokens: Joi.string().valid('true').description('Checked: DPoP required'),
    require_pushed_authorization_requests: Joi.string().valid('true').description('Checked: PAR required'),
    profile: Joi.string().valid('none', 'fapi2').description('The security profile'),
    jwks_uri: str('Empty: none').allow(''),
  }),
  appAction: portalForm({}),
  addMember: portalForm({
    username: str().required(),
    role: Joi.string().valid('owner', 'developer', 'viewer').required(),
  }),
  removeMember: portalForm({ user_id: str().required() }),
  createKey: portalForm({ name: str('What uses the key').allow('') }),
  revokeKey: portalForm({ key_id: str().required() }),
  addWebhook: portalForm({
    url: str('Where events are POSTed: https, a public host').required(),
    description: str('Your label for it').allow(''),
    enabled_events: str('Event types, one per line (transaction.mined, or a family: transaction.*); empty: all').allow(
      '',
    ),
  }),
  webhookSettings: portalForm({
    url: str('Where events are POSTed').required(),
    description: str('Your label for it').allow(''),
    enabled_events: str('Event types, one per line; empty: all').allow(''),
  }),
  recoverWebhook: portalForm({ since: str('A time in UTC: 2026-01-31T12:00 or ISO 8601').required() }),
  redeliver: portalForm({ delivery_id: str().required() }),
};

/** GET /portal/apps/{id}/payments: search by reference and status. */
export const PORTAL_PAYMENTS_QUERY = form({
  reference: str('Your order’s reference, exactly').max(200),
  status: str('A payment request’s or a transaction’s status').max(20),
  requests_after: str('The next page of payment requests').max(200),
  transactions_after: str('The next page of transactions').max(200),
});

/** GET /portal/apps/{id}/events: a type filter, and the page after an event. */
export const PORTAL_EVENTS_QUERY = form({
  type: str('Event types, comma-separated (transaction.mined, payment_request.*)').max(2000),
  after: str('The last event of the previous page').max(100),
});

/** GET /portal/callback: the authorization response. */
export const PORTAL_CALLBACK_QUERY = form({
  code: str(),
  state: str(),
  error: str(),
  error_description: str(),
  iss: str(),
});
