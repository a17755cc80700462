import Joi from 'joi';
import { form, PASSKEY_FIELDS, str } from '../kernel/form-schemas';

/** GET|POST /logout (checked by signin/logout-request.ts). */
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

const TARGET_FIELDS = {
  interaction: str('The sign-in in progress (from /authorize)'),
  next: Joi.string()
    .valid('account', 'device')
    .description(
      'Sign in to the account page (account), or to allow a device (device, with user_code), rather than to an app',
    ),
  user_code: str('With next=device: the code the device shows (RFC 8628), for /device once signed in'),
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
