import { form, PASSKEY_FIELDS, str } from '../kernel/form-schemas';

/** The account page's approval forms (POST /account/approvals/…; issue 42), with the page's CSRF token. */
export const APPROVAL_FORMS = {
  approve: form({
    csrf: str('The account page’s CSRF token').required(),
    request_id: str('The request’s id on the account page (bcr_…)').required(),
    password: str('The account’s password: the proof, unless a passkey answers (credential)'),
    ...PASSKEY_FIELDS,
  }),
  deny: form({
    csrf: str('The account page’s CSRF token').required(),
    request_id: str('The request’s id on the account page (bcr_…)').required(),
  }),
};

/** POST /account/login-hint-tokens: the person makes an agent a login_hint_token (login-hint-section.ts). */
export const LOGIN_HINT_FORM = form({
  csrf: str('The account page’s CSRF token').required(),
  client_id: str('The agent’s client id (an app with a CIBA mode)').required().max(2000),
});

/** POST /bc-authorize (CIBA Core §7.1), as documented; the route checks each field itself (bc-authorize-route.ts). */
export const BC_AUTHORIZE_FORM = form({
  scope: str('Space-separated; must include openid (openid, email, profile)').required(),
  login_hint: str('The person’s sub for this app (pairwise): the sub of an id_token the app received'),
  id_token_hint: str('Instead of login_hint: an id_token this server issued to the app'),
  login_hint_token: str(
    'Instead of login_hint: a login hint token (typ login-hint+jwt) the person made for this app on their account page',
  ),
  binding_message: str('A short code or sentence shown to the person, at most 100 printable characters').max(100),
  acr_values: str('Space-separated acr values; the person must meet one (access_denied otherwise)'),
  requested_expiry: str('Seconds the request waits for the person: 30 to 1800 (default 300)'),
  authorization_details: str(
    'RFC 9396: a JSON array of {"type":"payment","amount":"12.50","currency":"EUR","payee":"…","reference":"…"} ' +
      'and {"type":"action","description":"…","resource":"…"}; any other type is invalid_authorization_details',
  ),
  client_notification_token: str(
    'Ping mode (required there): the bearer token of the notification, at most 1024 characters',
  ),
  client_id: str('With client_secret_post or private_key_jwt'),
  client_secret: str('client_secret_post'),
  client_assertion_type: str('private_key_jwt: urn:ietf:params:oauth:client-assertion-type:jwt-bearer'),
  client_assertion: str('private_key_jwt: the signed JWT'),
});
