import Joi from 'joi';
import { form, str } from '../kernel/form-schemas';

/** POST /device_authorization (RFC 8628 §3.1), after the app's authentication as at /token. */
export const DEVICE_AUTHORIZATION_FORM = form({
  client_id: str('A public client, or client_secret_post'),
  client_secret: str('client_secret_post'),
  scope: str(
    'openid, profile, email, offline_access, and the scopes of resource; openid or resource is required (at most 2000 characters)',
  ),
  resource: str('RFC 8707: the uri of a resource registered here; the access token’s aud'),
  acr_values: str('Voluntary, as at /authorize: the tokens’ acr states the level the person has'),
  claims: str('OpenID Connect claims parameter (JSON): an essential acr is required of the person'),
});

/** GET /device: the user code, pre-filled by verification_uri_complete. */
export const DEVICE_QUERY = form({
  user_code: str('The code the device shows (XXXX-XXXX; case, spaces and dashes do not matter)'),
});

/** POST /device: the code typed (step 1), then the decision (step 2). */
export const DEVICE_FORM = form({
  csrf: str('The page’s CSRF token').required(),
  user_code: str('The code the device shows').required(),
  decision: Joi.string()
    .valid('confirm', 'approve', 'deny')
    .description('confirm: the code was typed (sign in next); approve or deny: the person’s decision'),
});
