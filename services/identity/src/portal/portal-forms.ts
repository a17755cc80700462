import Joi from 'joi';
import { form, str } from '../kernel/form-schemas';

// The portal's forms and query strings: the routes check requests with them (form-check.ts) and their
// OpenAPI fragments (*.openapi.ts) show the same objects.

/**
 * A webhook's event types: one checkbox per type (and per family, `transaction.*`), the field repeated for
 * each ticked; none ticked: every type. A single text of types one per line is read as well.
 */
const eventTypesField = Joi.alternatives()
  .try(Joi.array().items(Joi.string().max(200)).max(100), Joi.string().max(5000).allow(''))
  .description(
    'Event types: transaction.mined, or a family: transaction.*; one field each, or one per line; none: every type',
  );

/** The security page's fields (an unchecked box is not sent: off). */
const SECURITY_FIELDS = {
  min_verification_level: Joi.string().valid('none', 'device', 'orb'),
  id_token_signed_response_alg: Joi.string().valid('RS256', 'PS256', 'ES256'),
  dpop_bound_access_tokens: Joi.string().valid('true').description('Checked: DPoP required'),
  require_pushed_authorization_requests: Joi.string().valid('true').description('Checked: PAR required'),
  profile: Joi.string().valid('none', 'fapi2').description('The security profile'),
  jwks_uri: str('Empty: none').allow(''),
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
  // the settings page's form; the one-page form of before also sent the security page's fields, still read here
  settings: portalForm({
    name: str(),
    redirect_uris: str('One per line'),
    post_logout_redirect_uris: str('One per line'),
    backchannel_logout_uri: str('Empty: none').allow(''),
    web_origins: str('One per line').allow(''),
    ...SECURITY_FIELDS,
  }),
  security: portalForm(SECURITY_FIELDS),
  // the agents and devices page's; may_act_for_users is the operator's, so no portal form carries it
  agents: portalForm({
    device_authorization_grant: Joi.string().valid('true').description('Checked: the device flow (RFC 8628) on'),
    backchannel_token_delivery_mode: Joi.string()
      .valid('none', 'poll', 'ping')
      .description('CIBA: none (off), poll or ping'),
    backchannel_client_notification_endpoint: str('CIBA ping mode: where Attest POSTs; empty: none').allow(''),
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
    enabled_events: eventTypesField,
  }),
  webhookSettings: portalForm({
    url: str('Where events are POSTed').required(),
    description: str('Your label for it').allow(''),
    enabled_events: eventTypesField,
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
