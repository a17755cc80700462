import type { Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  documentAdminRoute,
  jsonResponse,
  operatorActor,
  validate,
  type AuditLog,
} from '@attest/common';
import type { DeliveryWithAttempts, WebhookService } from '../domain/webhook-service';
import type { WebhookDelivery, WebhookEndpoint } from '../store/webhook-store';
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

export const addSchema = Joi.object({
  url: Joi.string().max(2000).required().messages({ 'string.max': 'url must be at most 2000 characters' }),
});
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

const iso = (d: Date | null) => d?.toISOString() ?? null;

export const publicEndpoint = (e: WebhookEndpoint) => ({
  webhook_id: e.id,
  app_id: e.appId,
  url: e.url,
  created_at: e.createdAt.toISOString(),
  previous_secret_expires_at:
    e.previousSecretExpiresAt && e.previousSecretExpiresAt > new Date()
      ? e.previousSecretExpiresAt.toISOString()
      : null,
  failing_since: iso(e.failingSince),
  disabled_at: iso(e.disabledAt),
  disabled_reason: e.disabledReason,
});

const publicDelivery = (d: WebhookDelivery) => ({
  delivery_id: d.id,
  webhook_id: d.endpointId,
  event_id: d.eventId,
  event_type: d.eventType,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.status === 'pending' ? d.nextAttemptAt.toISOString() : null,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  created_at: d.createdAt.toISOString(),
  finished_at: iso(d.finishedAt),
});

const withLog = (d: DeliveryWithAttempts) => ({
  ...publicDelivery(d),
  log: d.log.map((a) => ({
    attempt: a.attempt,
    started_at: a.startedAt.toISOString(),
    status_code: a.statusCode,
    error: a.error,
    latency_ms: a.latencyMs,
  })),
});

/** Webhook endpoints of apps (issue #12): add, list, remove, rotate the secret; the delivery log, redeliver, replay. */
export function webhookAdminRoutes(
  router: Router,
  deps: { webhooks: WebhookService; audit?: Pick<AuditLog, 'record'> },
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
      400: adminValidationResponse('app_id or url (https, a public host)'),
    },
  });
  router.post('/apps/:app_id/webhooks', async (req, res) => {
    const { app_id: appId } = validate(appIdParams, { app_id: req.params.app_id });
    const url = validate(addSchema, req.body).url as string;
    const { endpoint, secret } = await webhooks.add(appId, url);
    await audit?.record({
      type: 'webhook.added',
      actor: operatorActor(req, res),
      subject: endpoint.id,
      detail: { app_id: appId, url: endpoint.url },
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
    res.status(202).json(publicDelivery(await webhooks.redeliver(id)));
  });
}
