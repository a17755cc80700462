import type { Router } from 'express';
import Joi from 'joi';
import { operatorActor, validate, type AuditLog } from '@attest/common';
import type { DeliveryWithAttempts, WebhookService } from '../domain/webhook-service';
import type { WebhookDelivery, WebhookEndpoint } from '../store/webhook-store';

const APP_ID = Joi.string()
  .pattern(/^app_[0-9a-f]{32}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be app_ followed by 32 hexadecimal digits' });
const WEBHOOK_ID = Joi.string()
  .pattern(/^wh_[0-9a-f]{32}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be wh_ followed by 32 hexadecimal digits' });
const DELIVERY_ID = Joi.string()
  .pattern(/^whd_[0-9a-f]{32}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be whd_ followed by 32 hexadecimal digits' });

const addSchema = Joi.object({
  url: Joi.string().max(2000).required().messages({ 'string.max': 'url must be at most 2000 characters' }),
});
const replaySchema = Joi.object({
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

/** One path or query value, validated so an error names it. */
const param = <T>(name: string, schema: Joi.Schema<T>, value: unknown): T =>
  validate(Joi.object({ [name]: schema }), { [name]: value })[name] as T;

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

  router.post('/apps/:app_id/webhooks', async (req, res) => {
    const appId = param<string>('app_id', APP_ID.required(), req.params.app_id);
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

  router.get('/apps/:app_id/webhooks', async (req, res) => {
    const appId = param<string>('app_id', APP_ID.required(), req.params.app_id);
    res.json((await webhooks.list(appId)).map(publicEndpoint));
  });

  router.post('/apps/:app_id/webhooks/replay', async (req, res) => {
    const appId = param<string>('app_id', APP_ID.required(), req.params.app_id);
    const since = validate(replaySchema, req.body).since as Date;
    const result = await webhooks.replay(appId, since);
    res.status(202).json({ app_id: appId, since: since.toISOString(), ...result });
  });

  router.delete('/webhooks/:webhook_id', async (req, res) => {
    const id = param<string>('webhook_id', WEBHOOK_ID.required(), req.params.webhook_id);
    const removed = await webhooks.remove(id);
    await audit?.record({
      type: 'webhook.removed',
      actor: operatorActor(req, res),
      subject: id,
      detail: { app_id: removed.appId, url: removed.url },
    });
    res.json({ ...publicEndpoint(removed), removed: true });
  });

  router.post('/webhooks/:webhook_id/rotate-secret', async (req, res) => {
    const id = param<string>('webhook_id', WEBHOOK_ID.required(), req.params.webhook_id);
    const { endpoint, secret } = await webhooks.rotateSecret(id);
    await audit?.record({
      type: 'webhook.secret_rotated',
      actor: operatorActor(req, res),
      subject: id,
      detail: { app_id: endpoint.appId },
    });
    res.json({ ...publicEndpoint(endpoint), secret });
  });

  router.get('/webhooks/:webhook_id/deliveries', async (req, res) => {
    const id = param<string>('webhook_id', WEBHOOK_ID.required(), req.params.webhook_id);
    const limit = param<number>('limit', limitSchema, req.query.limit);
    res.json((await webhooks.deliveries(id, limit)).map(withLog));
  });

  router.post('/webhook-deliveries/:delivery_id/redeliver', async (req, res) => {
    const id = param<string>('delivery_id', DELIVERY_ID.required(), req.params.delivery_id);
    res.status(202).json(publicDelivery(await webhooks.redeliver(id)));
  });
}
