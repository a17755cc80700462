import type Joi from 'joi';
import { htmlResponse, redirectResponse, type EndpointDocs, type ResponseDoc } from '@attest/common';
import { PORTAL_CALLBACK_QUERY, PORTAL_EVENTS_QUERY, PORTAL_FORMS, PORTAL_PAYMENTS_QUERY } from './form-schemas';
import { FORM, pageError, pageFormErrors } from './openapi-document';

const tags = ['portal'];
const notFound = pageError('not_found: no such app, or you are not a member of it (the same answer either way)');

const page = (summary: string, extra: Record<number, ResponseDoc> = {}, query?: Joi.ObjectSchema): EndpointDocs => ({
  GET: {
    summary,
    tags,
    ...(query ? { query } : {}),
    responses: {
      200: htmlResponse('The page'),
      302: redirectResponse('To /portal without a portal session'),
      ...extra,
    },
  },
});

const portalForm = (
  summary: string,
  schema: Joi.ObjectSchema,
  extra: Record<number, ResponseDoc> = {},
): EndpointDocs => ({
  POST: {
    summary,
    tags,
    body: { contentType: FORM, schema },
    responses: {
      303: redirectResponse('Done: back to the page with a notice; to /portal without a portal session'),
      ...pageFormErrors('invalid_parameter or required, naming the field'),
      ...extra,
    },
  },
});

const refused = {
  403: pageError('invalid_csrf, or forbidden: your role on the app does not allow this (the server refuses)'),
  404: notFound,
};
const again = (what: string) => ({ 200: htmlResponse(`${what}`), ...refused });
const transactionsDown = pageError('transactions_unavailable: the transactions service cannot be reached');
/** A change of a webhook endpoint (developer or owner); a refusal is shown on its page with its status. */
const webhookForm = (summary: string, schema: Joi.ObjectSchema, extra: Record<number, ResponseDoc> = {}) =>
  portalForm(summary, schema, {
    ...again('The endpoint page with what went wrong'),
    404: pageError('not_found: no such app or endpoint of it (the same answer either way)'),
    503: transactionsDown,
    ...extra,
  });

/** The developer portal's pages (issue 27), in the public document as the sign-in pages are. */
export const portalDocs = {
  home: page('The portal: sign in, or your apps (and “create an app” with PORTAL_SELF_SERVICE_APPS)', {}),
  signin: {
    GET: {
      summary: 'Sign in to the portal: to /authorize (code flow, PKCE S256) as the portal’s own app',
      tags,
      responses: { 302: redirectResponse('To /authorize') },
    },
  } as EndpointDocs,
  callback: {
    GET: {
      summary: 'The portal’s redirect URI: the code is exchanged at /token, the id_token checked',
      tags,
      query: PORTAL_CALLBACK_QUERY,
      responses: {
        303: redirectResponse('Signed in: to /portal'),
        400: htmlResponse('The sign-in did not complete (state, error, or the code refused); a link to try again'),
      },
    },
  } as EndpointDocs,
  signOut: portalForm('Sign out of the portal (and of Attest, through /logout)', PORTAL_FORMS.signOut),
  signedOut: {
    GET: { summary: 'Where sign-out ends', tags, responses: { 200: htmlResponse('The page') } },
  } as EndpointDocs,
  createApp: portalForm(
    'Create an app (PORTAL_SELF_SERVICE_APPS); the creator becomes its owner',
    PORTAL_FORMS.createApp,
    {
      200: htmlResponse('The new app’s page, with its client secret shown once'),
      400: pageError('invalid_parameter naming the field (the page again)'),
      403: pageError('invalid_csrf, or self_service_disabled'),
    },
  ),
  app: page('An app: settings, client, first sign-in snippet, team', { 404: notFound }),
  settings: portalForm('Change an app’s settings (developer or owner)', PORTAL_FORMS.settings, {
    ...again('The page again with what went wrong, or with a new client secret shown once'),
  }),
  rotateSecret: portalForm('A new client secret, shown once (developer or owner)', PORTAL_FORMS.appAction, {
    ...again('The app page with the new secret'),
    409: pageError('public_client or private_key_jwt: the app has no secret'),
  }),
  disable: portalForm('Disable the app (owner)', PORTAL_FORMS.appAction, refused),
  enable: portalForm('Enable the app again (owner)', PORTAL_FORMS.appAction, refused),
  addMember: portalForm('Add a member, or change a role (owner)', PORTAL_FORMS.addMember, {
    ...again('The page again with what went wrong'),
    409: pageError('last_owner: the only owner stays owner'),
  }),
  removeMember: portalForm('Take a member off the team (owner)', PORTAL_FORMS.removeMember, {
    ...again('The page again with what went wrong'),
    409: pageError('last_owner: the only owner stays'),
  }),
  keys: page('An app’s API keys: name, created, last used', {
    404: notFound,
    503: pageError('transactions_unavailable: the transactions service cannot be reached'),
  }),
  createKey: portalForm('Create an API key (developer or owner): shown once', PORTAL_FORMS.createKey, {
    ...again('The keys page with the new key, shown once'),
    503: pageError('transactions_unavailable'),
  }),
  revokeKey: portalForm('Revoke an API key of the app (developer or owner)', PORTAL_FORMS.revokeKey, {
    ...refused,
    503: pageError('transactions_unavailable'),
  }),
  webhooks: page('An app’s webhook endpoints: URL, event types, status', {
    404: notFound,
    503: transactionsDown,
  }),
  addWebhook: portalForm(
    'Add a webhook endpoint (developer or owner): its signing secret shown once',
    PORTAL_FORMS.addWebhook,
    {
      ...again('The webhooks page with the new endpoint and its secret, shown once'),
      400: pageError('required or invalid_parameter naming the field: url (https, a public host), enabled_events'),
      409: pageError('too_many_webhooks'),
      503: transactionsDown,
    },
  ),
  webhook: page('A webhook endpoint: its settings, status and delivery log (each attempt’s status or error)', {
    404: pageError('not_found: no such app or endpoint of it (the same answer either way)'),
    503: transactionsDown,
  }),
  webhookSettings: webhookForm('Change the endpoint’s URL, description and event types', PORTAL_FORMS.webhookSettings, {
    400: pageError('required or invalid_parameter naming the field: url, enabled_events'),
  }),
  webhookRotate: webhookForm(
    'A new signing secret, shown once (the previous one signs 24 hours more)',
    PORTAL_FORMS.appAction,
    {
      200: htmlResponse('The endpoint page with the new secret'),
    },
  ),
  webhookEnable: webhookForm('Enable the endpoint again', PORTAL_FORMS.appAction),
  webhookDisable: webhookForm('Disable the endpoint: nothing is sent to it', PORTAL_FORMS.appAction),
  webhookTest: webhookForm('Send the endpoint a test event (webhook.test)', PORTAL_FORMS.appAction, {
    409: pageError('webhook_disabled: enable it first'),
  }),
  webhookRecover: webhookForm(
    'Deliver again the events since a time whose delivery to it failed',
    PORTAL_FORMS.recoverWebhook,
    {
      200: htmlResponse('The endpoint page: how many deliveries were queued'),
      400: pageError('required or invalid_parameter: since'),
    },
  ),
  webhookRedeliver: webhookForm('Send one delivery of the endpoint again', PORTAL_FORMS.redeliver),
  webhookRemove: webhookForm('Remove the endpoint and its delivery log', PORTAL_FORMS.appAction),
  payments: page(
    'An app’s payment requests and transactions, searched by reference and status',
    { 400: pageError('invalid_parameter: status'), 404: notFound, 503: transactionsDown },
    PORTAL_PAYMENTS_QUERY,
  ),
  paymentRequest: page('A payment request: status, reason, amounts, its payments', {
    404: pageError('not_found: no such app or payment request of it'),
    503: transactionsDown,
  }),
  transaction: page('A transaction: status, reason, amount, its status history', {
    404: pageError('not_found: no such app or transaction of it'),
    503: transactionsDown,
  }),
  events: page(
    'An app’s events, oldest first, with their payloads; filtered by type',
    {
      400: pageError('invalid_parameter: type (an unknown event type) or after'),
      404: notFound,
      503: transactionsDown,
    },
    PORTAL_EVENTS_QUERY,
  ),
  insight: page('Sign-ins per day and consent withdrawals of the app (counts only)', { 404: notFound }),
};
