import type { Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  documentAdminRoute,
  errorResponse,
  jsonResponse,
  operatorActor,
  validate,
  type AuditLog,
} from '@attest/common';
import type { WebhookService } from '../domain/webhook-service';
import { publicDelivery, publicEndpoint, testEventQueued, withLog } from '../routes/webhook-json';
import type { WebhookEndpoint } from '../store/webhook-store';
import { eventFilter, MAX_EVENT_FILTERS } from '../domain/webhook-filters';
import { transactionsSchemas } from './admin-document';
import { appIdParams } from './admin-routes';

const WEBHOOK_ID = Joi.string()
  .pattern(/^wh_[0-9a-f]{32}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be wh_ followed by 32 hexadecimal digits' });
const DELIVERY_ID = Joi.string()
  .pattern(/^whd_[0-9a-f]{32}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be whd_ followed by 32 hexadecimal digits' });

const webhookParams = Joi.object({ webhook_id: WEBHOOK_ID.required() });
const deliveryParams = Joi.object({ delivery_id: DELIVERY_ID.required() });

const URL_FIELD = Joi.string().max(2000).messages({ 'string.max': 'url must be at most 2000 characters' });
const DESCRIPTION = Joi.string()
  .max(200)
  .allow(null, '')
  .description('Your label for the endpoint')
  .messages({ 'string.max': 'description must be at most 200 characters' });
const ENABLED_EVENTS = Joi.array()
  .items(Joi.string().max(100))
  .max(MAX_EVENT_FILTERS)
  .description(
    'The event types sent to it, each a type (transaction.mined) or a family (transaction.*); empty or absent: every type',
  )
  .messages({ 'array.max': `enabled_events may name at most ${MAX_EVENT_FILTERS} event types` });

export const addSchema = Joi.object({
  url: URL_FIELD.required(),
  description: DESCRIPTION,
  enabled_events: ENABLED_EVENTS,
});
export const updateSchema = Joi.object({
  url: URL_FIELD,
  description: DESCRIPTION,
  enabled_events: ENABLED_EVENTS,
  enabled: Joi.boolean().description(
    'false disables it (nothing is sent); true enables it again, with the same secret',
  ),
})
  .min(1)
  .messages({ 'object.min': 'Give at least one of url, description, enabled_events, enabled.' });

/** The body of an add or update, read: each field checked (enabled_events against the known event types). */
export function endpointFields(body: { description?: string | null; enabled_events?: string[] }): {
  description?: string | null;
  enabledEvents?: string[] | null;
} {
  return {
    ...(body.description !== undefined ? { description: body.description || null } : {}),
    ...(body.enabled_events !== undefined ? { enabledEvents: eventFilter(body.enabled_events, 'enabled_events') } : {}),
  };
}
export const replaySchema = Joi.object({
  since: Joi.date().iso().required().messages({
    'date.format': 'since must be an ISO 8601 time, such as 2026-01-31T12:00:00Z',
    'date.base': 'since must be an ISO 8601 time, such as 2026-01-31T12:00:00Z',
  }),
});
const limitSchema = Joi.number().integer().min(1).max(1000).default(50).messages({
  'number.base': '{{#label}} must be a whole number from 1 to 1000',
  'number.integer': '{{#label}} must be a whole number from 1 to 1000',
  'number.min': '{{#label}} must be a whole number from 1 to 1000',
  'number.max': '{{#label}} must be a whole number from 1 to 1000',
});

/** GET /webhooks/{webhook_id}/deliveries?limit= (other query parameters are ignored). */
export const deliveriesQuery = Joi.object({ limit: limitSchema });

const noWebhook = adminNotFoundResponse('no webhook endpoint with this webhook_id (attribute webhook_id)');
const tags = ['webhooks'];

/**
 * An update: the fields (url checked against the outbound guard, enabled_events against the known types),
 * then `enabled` (disable with `disableReason`, or enable again). The endpoint as it is after.
 */
export async function updateEndpoint(
  webhooks: WebhookService,
  id: string,
  body: { url?: string; description?: string | null; enabled_events?: string[]; enabled?: boolean },
  disableReason: string,
): Promise<WebhookEndpoint> {
  const fields = endpointFields(body);
  let endpoint =
    body.url !== undefined || Object.keys(fields).length > 0
      ? await webhooks.update(id, { url: body.url, ...fields })
      : await webhooks.get(id);
  if (body.enabled === false) endpoint = (await webhooks.disable(id, disableReason)).endpoint;
  if (body.enabled === true) endpoint = (await webhooks.enable(id)).endpoint;
  return endpoint;
}

/**
 * Webhook endpoints of apps (issue #12): add, list, change, disable and enable, remove, rotate the secret;
 * the delivery log, redeliver, replay; a test event and recover for one endpoint (issue #27: the portal).
 */
export function webhookAdminRoutes(
  router: Router,
  deps: { webhooks: WebhookService; audit?: Pick<AuditLog, 'record'>; wake?: () => void },
): void {
  const { webhooks, audit } = deps;

  documentAdminRoute(router, 'POST', '/apps/:app_id/webhooks', {
    summary: 'Add a webhook endpoint to an app',
    description: 'Events of the app’s transactions are POSTed to it, signed with the secret in this answer only.',
    tags,
    params: appIdParams,
    body: { contentType: 'application/json', schema: addSchema },
    responses: {
      201: jsonResponse('The endpoint and its signing secret (shown once)', transactionsSchemas.webhookWithSecret),
      400: adminValidationResponse(
        'app_id, url (https, a public host), description or enabled_events (an unknown event type)',
      ),
      409: errorResponse('too_many_webhooks: the app has 20 endpoints already'),
    },
  });
  router.post('/apps/:app_id/webhooks', async (req, res) => {
    const { app_id: appId } = validate(appIdParams, { app_id: req.params.app_id });
    const body = validate(addSchema, req.body);
    const fields = endpointFields(body);
    const { endpoint, secret } = await webhooks.add(appId, body.url as string, fields);
    await audit?.record({
      type: 'webhook.added',
      actor: operatorActor(req, res),
      subject: endpoint.id,
      detail: { app_id: appId, url: endpoint.url, enabled_events: endpoint.enabledEvents },
    });
    res.status(201).json({ ...publicEndpoint(endpoint), secret });
  });

  documentAdminRoute(router, 'GET', '/apps/:app_id/webhooks', {
    summary: 'An app’s webhook endpoints (never their secrets)',
    tags,
    params: appIdParams,
    responses: {
      200: jsonResponse('The endpoints', { type: 'array', items: transactionsSchemas.webhook }),
      400: adminValidationResponse('app_id'),
    },
  });
  router.get('/apps/:app_id/webhooks', async (req, res) => {
    const { app_id: appId } = validate(appIdParams, { app_id: req.params.app_id });
    res.json((await webhooks.list(appId)).map(publicEndpoint));
  });

  documentAdminRoute(router, 'POST', '/apps/:app_id/webhooks/replay', {
    summary: 'Deliver again every event of an app since a time, to each of its enabled endpoints',
    tags,
    params: appIdParams,
    body: { contentType: 'application/json', schema: replaySchema },
    responses: {
      202: jsonResponse('Queued', {
        type: 'object',
        required: ['app_id', 'since', 'deliveries', 'events'],
        additionalProperties: false,
        properties: {
          app_id: { type: 'string' },
          since: { type: 'string', format: 'date-time' },
          deliveries: { type: 'integer', minimum: 0, description: 'Deliveries queued' },
          events: { type: 'integer', minimum: 0, description: 'Events they carry' },
        },
      }),
      400: adminValidationResponse('app_id or since'),
    },
  });
  router.post('/apps/:app_id/webhooks/replay', async (req, res) => {
    const { app_id: appId } = validate(appIdParams, { app_id: req.params.app_id });
    const since = validate(replaySchema, req.body).since as Date;
    const result = await webhooks.replay(appId, since);
    deps.wake?.();
    res.status(202).json({ app_id: appId, since: since.toISOString(), ...result });
  });

  documentAdminRoute(router, 'DELETE', '/webhooks/:webhook_id', {
    summary: 'Remove a webhook endpoint',
    tags,
    params: webhookParams,
    responses: {
      200: jsonResponse('The endpoint as it was, with removed: true', transactionsSchemas.removedWebhook),
      400: adminValidationResponse('webhook_id'),
      404: noWebhook,
    },
  });
  router.delete('/webhooks/:webhook_id', async (req, res) => {
    const { webhook_id: id } = validate(webhookParams, { webhook_id: req.params.webhook_id });
    const removed = await webhooks.remove(id);
    await audit?.record({
      type: 'webhook.removed',
      actor: operatorActor(req, res),
      subject: id,
      detail: { app_id: removed.appId, url: removed.url },
    });
    res.json({ ...publicEndpoint(removed), removed: true });
  });

  documentAdminRoute(router, 'PATCH', '/webhooks/:webhook_id', {
    summary: 'Change a webhook endpoint: url, description, event-type filter, enabled',
    tags,
    params: webhookParams,
    body: { contentType: 'application/json', schema: updateSchema },
    responses: {
      200: jsonResponse('The endpoint as it is now', transactionsSchemas.webhook),
      400: adminValidationResponse('webhook_id, url, description, enabled_events or enabled'),
      404: noWebhook,
    },
  });
  router.patch('/webhooks/:webhook_id', async (req, res) => {
    const { webhook_id: id } = validate(webhookParams, { webhook_id: req.params.webhook_id });
    const body = validate(updateSchema, req.body);
    const endpoint = await updateEndpoint(webhooks, id, body, 'disabled by an operator');
    await audit?.record({
      type: 'webhook.updated',
      actor: operatorActor(req, res),
      subject: id,
      detail: { app_id: endpoint.appId, changed: Object.keys(body) },
    });
    res.json(publicEndpoint(endpoint));
  });

  for (const action of ['disable', 'enable'] as const) {
    documentAdminRoute(router, 'POST', `/webhooks/:webhook_id/${action}`, {
      summary:
        action === 'disable'
          ? 'Disable a webhook endpoint: no new deliveries, waiting ones wait'
          : 'Enable a disabled webhook endpoint again, with the same secret and its delivery log',
      tags,
      params: webhookParams,
      responses: {
        200: jsonResponse('The endpoint as it is now', transactionsSchemas.webhook),
        400: adminValidationResponse('webhook_id'),
        404: noWebhook,
      },
    });
    router.post(`/webhooks/:webhook_id/${action}`, async (req, res) => {
      const { webhook_id: id } = validate(webhookParams, { webhook_id: req.params.webhook_id });
      const { endpoint, changed } =
        action === 'disable' ? await webhooks.disable(id, 'disabled by an operator') : await webhooks.enable(id);
      if (changed)
        await audit?.record({
          type: action === 'disable' ? 'webhook.disabled' : 'webhook.enabled',
          actor: operatorActor(req, res),
          subject: id,
          detail: { app_id: endpoint.appId },
        });
      if (action === 'enable') deps.wake?.();
      res.json(publicEndpoint(endpoint));
    });
  }

  documentAdminRoute(router, 'POST', '/webhooks/:webhook_id/rotate-secret', {
    summary: 'A new signing secret for a webhook endpoint',
    description: 'For a while (previous_secret_expires_at) deliveries carry a signature with each secret.',
    tags,
    params: webhookParams,
    responses: {
      200: jsonResponse('The endpoint and its new secret (shown once)', transactionsSchemas.webhookWithSecret),
      400: adminValidationResponse('webhook_id'),
      404: noWebhook,
    },
  });
  router.post('/webhooks/:webhook_id/rotate-secret', async (req, res) => {
    const { webhook_id: id } = validate(webhookParams, { webhook_id: req.params.webhook_id });
    const { endpoint, secret } = await webhooks.rotateSecret(id);
    await audit?.record({
      type: 'webhook.secret_rotated',
      actor: operatorActor(req, res),
      subject: id,
      detail: { app_id: endpoint.appId },
    });
    res.json({ ...publicEndpoint(endpoint), secret });
  });

  documentAdminRoute(router, 'GET', '/webhooks/:webhook_id/deliveries', {
    summary: 'The deliveries to a webhook endpoint, newest first, each with its attempts',
    tags,
    params: webhookParams,
    query: deliveriesQuery,
    responses: {
      200: jsonResponse('The deliveries', { type: 'array', items: transactionsSchemas.deliveryWithLog }),
      400: adminValidationResponse('webhook_id or limit'),
      404: noWebhook,
    },
  });
  router.get('/webhooks/:webhook_id/deliveries', async (req, res) => {
    const { webhook_id: id } = validate(webhookParams, { webhook_id: req.params.webhook_id });
    const { limit } = validate(deliveriesQuery, { limit: req.query.limit }) as { limit: number };
    res.json((await webhooks.deliveries(id, limit)).map(withLog));
  });

  documentAdminRoute(router, 'POST', '/webhook-deliveries/:delivery_id/redeliver', {
    summary: 'Send a delivery again (queued now, whatever its status)',
    tags,
    params: deliveryParams,
    responses: {
      202: jsonResponse('The delivery, pending', transactionsSchemas.delivery),
      400: adminValidationResponse('delivery_id'),
      404: adminNotFoundResponse('no webhook delivery with this delivery_id (attribute delivery_id)'),
    },
  });
  router.post('/webhook-deliveries/:delivery_id/redeliver', async (req, res) => {
    const { delivery_id: id } = validate(deliveryParams, { delivery_id: req.params.delivery_id });
    const delivery = await webhooks.redeliver(id);
    deps.wake?.();
    res.status(202).json(publicDelivery(delivery));
  });

  documentAdminRoute(router, 'POST', '/webhooks/:webhook_id/test', {
    summary: 'Send a test event to a webhook endpoint',
    description:
      'A webhook.test event ("test": true in its payload) queued for this endpoint only, delivered, signed and retried ' +
      'like any other; its delivery is in the delivery log. The same operation as the app API’s.',
    tags,
    params: webhookParams,
    responses: {
      202: jsonResponse('Queued', testEventQueued),
      400: adminValidationResponse('webhook_id'),
      404: noWebhook,
      409: errorResponse('webhook_disabled: the endpoint is disabled; enable it first'),
    },
  });
  router.post('/webhooks/:webhook_id/test', async (req, res) => {
    const { webhook_id: id } = validate(webhookParams, { webhook_id: req.params.webhook_id });
    const sent = await webhooks.sendTest(id);
    await audit?.record({
      type: 'webhook.test_sent',
      actor: operatorActor(req, res),
      subject: id,
      detail: { event_id: sent.eventId },
    });
    deps.wake?.();
    res.status(202).json({ webhook_id: id, event_id: sent.eventId, type: sent.type });
  });

  documentAdminRoute(router, 'POST', '/webhooks/:webhook_id/recover', {
    summary: 'Deliver again the events since a time whose delivery to this endpoint failed',
    description:
      'One new delivery (same webhook-id) for each event since `since` whose delivery to this endpoint failed for good ' +
      'and that it has not received since. The same operation as the app API’s.',
    tags,
    params: webhookParams,
    body: { contentType: 'application/json', schema: replaySchema },
    responses: {
      202: jsonResponse('Queued', {
        type: 'object',
        required: ['webhook_id', 'since', 'deliveries'],
        additionalProperties: false,
        properties: {
          webhook_id: { type: 'string' },
          since: { type: 'string', format: 'date-time' },
          deliveries: { type: 'integer', minimum: 0, description: 'Deliveries queued' },
        },
      }),
      400: adminValidationResponse('webhook_id or since'),
      404: noWebhook,
    },
  });
  router.post('/webhooks/:webhook_id/recover', async (req, res) => {
    const { webhook_id: id } = validate(webhookParams, { webhook_id: req.params.webhook_id });
    const since = validate(replaySchema, req.body).since as Date;
    const deliveries = await webhooks.recover(id, since);
    await audit?.record({
      type: 'webhook.recovered',
      actor: operatorActor(req, res),
      subject: id,
      detail: { since: since.toISOString(), deliveries },
    });
    deps.wake?.();
    res.status(202).json({ webhook_id: id, since: since.toISOString(), deliveries });
  });
}
