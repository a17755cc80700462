import type Joi from 'joi';
import { htmlResponse, type ResponseDoc } from '@attest/common';
import { PORTAL_FORMS } from './portal-forms';
import { pageError } from '../kernel/openapi-document';
import { again, notFound, page, portalForm, transactionsDown } from './portal-openapi';

/** A change of a webhook endpoint (developer or owner); a refusal is shown on its page with its status. */
const webhookForm = (summary: string, schema: Joi.ObjectSchema, extra: Record<number, ResponseDoc> = {}) =>
  portalForm(summary, schema, {
    ...again('The endpoint page with what went wrong'),
    404: pageError('not_found: no such app or endpoint of it (the same answer either way)'),
    503: transactionsDown,
    ...extra,
  });

/** /portal/apps/{id}/webhooks…: an app's webhook endpoints and their delivery logs. */
export const portalWebhookDocs = {
  webhooks: page('An app’s webhook endpoints: URL, event types, status; the add form (event types as checkboxes)', {
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
  webhook: page(
    'A webhook endpoint: its settings (event types as checkboxes), status and delivery log (each attempt’s status or error, duration, the bodies sent and answered, truncated)',
    {
      404: pageError('not_found: no such app or endpoint of it (the same answer either way)'),
      503: transactionsDown,
    },
  ),
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
};
