import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import {
  adminRoute,
  adminNotFoundResponse,
  adminValidationResponse,
  errorResponse,
  jsonResponse,
  validate,
  type AdminOperationDoc,
  type AuditLog,
  type ResponseDoc,
} from '@attest/common';
import { appIdOf, operatorAudit } from '../kernel/admin-route';
import { appIdParams } from '../kernel/admin-params';
import {
  addSchema,
  deliveriesQuery,
  endpointFields,
  replaySchema,
  updateEndpoint,
  updateSchema,
} from './webhook-fields';
import { publicDelivery, publicEndpoint, withLog } from './webhook-json';
import type { WebhookService } from './webhook-service';
import { adminSchemas, recoverQueued, testEventQueued } from './webhooks.openapi';

const WEBHOOK_ID = Joi.string()
  .pattern(/^wh_[0-9a-f]{32}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be wh_ followed by 32 hexadecimal digits' });
const DELIVERY_ID = Joi.string()
  .pattern(/^whd_[0-9a-f]{32}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be whd_ followed by 32 hexadecimal digits' });

const webhookParams = Joi.object({ webhook_id: WEBHOOK_ID.required() });
const deliveryParams = Joi.object({ delivery_id: DELIVERY_ID.required() });

/** The `{webhook_id}` of a /webhooks/{webhook_id}… path, checked (400 naming webhook_id). */
const webhookIdOf = (req: Request): string =>
  validate(webhookParams, { webhook_id: req.params.webhook_id }).webhook_id as string;

const noWebhook = adminNotFoundResponse('no webhook endpoint with this webhook_id (attribute webhook_id)');
const tags = ['webhooks'];

export interface WebhooksAdminDeps {
  webhooks: WebhookService;
  audit?: Pick<AuditLog, 'record'>;
  /** New deliveries are due: look now rather than at the next poll. */
  wake?: () => void;
}

/**
 * Webhook endpoints of apps (issue #12): add, list, change, disable and enable, remove, rotate the secret;
 * the delivery log, redeliver, replay; a test event and recover for one endpoint (issue #27: the portal).
 */
export function webhookAdminRoutes(router: Router, deps: WebhooksAdminDeps): void {
  const { webhooks } = deps;
  const record = operatorAudit(deps.audit);

  /**
   * An operation on one endpoint (/webhooks/{webhook_id}…): its webhook_id read from the path (400 naming
   * it), 404 when there is no such endpoint.
   */
  const onEndpoint = (
    method: 'POST' | 'PATCH' | 'DELETE' | 'GET',
    path: string,
    doc: Pick<AdminOperationDoc, 'summary' | 'description' | 'body' | 'query'> & {
      answers: Record<number, ResponseDoc>;
      /** What a 400 names. */
      invalid: string;
      conflict?: ResponseDoc;
    },
    handler: (req: Request, res: Response, id: string) => Promise<void>,
  ) => {
    const responses: Record<number, ResponseDoc> = {
      ...doc.answers,
      400: adminValidationResponse(doc.invalid),
      404: noWebhook,
    };
    if (doc.conflict) responses[409] = doc.conflict;
    adminRoute(
      router,
      method,
      path,
      {
        summary: doc.summary,
        ...(doc.description ? { description: doc.description } : {}),
        tags,
        params: webhookParams,
        ...(doc.body ? { body: doc.body } : {}),
        ...(doc.query ? { query: doc.query } : {}),
        responses,
      },
      async (req, res) => handler(req, res, webhookIdOf(req)),
    );
  };

  adminRoute(
    router,
    'POST',
    '/apps/:app_id/webhooks',
    {
      summary: 'Add a webhook endpoint to an app',
      description: 'Events of the app’s transactions are POSTed to it, signed with the secret in this answer only.',
      tags,
      params: appIdParams,
      body: { contentType: 'application/json', schema: addSchema },
      responses: {
        201: jsonResponse('The endpoint and its signing secret (shown once)', adminSchemas.webhookWithSecret),
        400: adminValidationResponse(
          'app_id, url (https, a public host), description or enabled_events (an unknown event type)',
        ),
        409: errorResponse('too_many_webhooks: the app has 20 endpoints already'),
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      const body = validate(addSchema, req.body);
      const fields = endpointFields(body);
      const { endpoint, secret } = await webhooks.add(appId, body.url as string, fields);
      await record(req, res, 'webhook.added', endpoint.id, {
        app_id: appId,
        url: endpoint.url,
        enabled_events: endpoint.enabledEvents,
      });
      res.status(201).json({ ...publicEndpoint(endpoint), secret });
    },
  );

  adminRoute(
    router,
    'GET',
    '/apps/:app_id/webhooks',
    {
      summary: 'An app’s webhook endpoints (never their secrets)',
      tags,
      params: appIdParams,
      responses: {
        200: jsonResponse('The endpoints', { type: 'array', items: adminSchemas.webhook }),
        400: adminValidationResponse('app_id'),
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      res.json((await webhooks.list(appId)).map(publicEndpoint));
    },
  );

  adminRoute(
    router,
    'POST',
    '/apps/:app_id/webhooks/replay',
    {
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
    },
    async (req, res) => {
      const appId = appIdOf(req);
      const since = validate(replaySchema, req.body).since as Date;
      const result = await webhooks.replay(appId, since);
      deps.wake?.();
      res.status(202).json({ app_id: appId, since: since.toISOString(), ...result });
    },
  );

  onEndpoint(
    'DELETE',
    '/webhooks/:webhook_id',
    {
      summary: 'Remove a webhook endpoint',
      answers: { 200: jsonResponse('The endpoint as it was, with removed: true', adminSchemas.removedWebhook) },
      invalid: 'webhook_id',
    },
    async (req, res, id) => {
      const removed = await webhooks.remove(id);
      await record(req, res, 'webhook.removed', id, { app_id: removed.appId, url: removed.url });
      res.json({ ...publicEndpoint(removed), removed: true });
    },
  );

  onEndpoint(
    'PATCH',
    '/webhooks/:webhook_id',
    {
      summary: 'Change a webhook endpoint: url, description, event-type filter, enabled',
      body: { contentType: 'application/json', schema: updateSchema },
      answers: { 200: jsonResponse('The endpoint as it is now', adminSchemas.webhook) },
      invalid: 'webhook_id, url, description, enabled_events or enabled',
    },
    async (req, res, id) => {
      const body = validate(updateSchema, req.body);
      const endpoint = await updateEndpoint(webhooks, id, body, 'disabled by an operator');
      await record(req, res, 'webhook.updated', id, { app_id: endpoint.appId, changed: Object.keys(body) });
      res.json(publicEndpoint(endpoint));
    },
  );

  for (const action of ['disable', 'enable'] as const) {
    onEndpoint(
      'POST',
      `/webhooks/:webhook_id/${action}`,
      {
        summary:
          action === 'disable'
            ? 'Disable a webhook endpoint: no new deliveries, waiting ones wait'
            : 'Enable a disabled webhook endpoint again, with the same secret and its delivery log',
        answers: { 200: jsonResponse('The endpoint as it is now', adminSchemas.webhook) },
        invalid: 'webhook_id',
      },
      async (req, res, id) => {
        const { endpoint, changed } =
          action === 'disable' ? await webhooks.disable(id, 'disabled by an operator') : await webhooks.enable(id);
        if (changed)
          await record(req, res, action === 'disable' ? 'webhook.disabled' : 'webhook.enabled', id, {
            app_id: endpoint.appId,
          });
        if (action === 'enable') deps.wake?.();
        res.json(publicEndpoint(endpoint));
      },
    );
  }

  onEndpoint(
    'POST',
    '/webhooks/:webhook_id/rotate-secret',
    {
      summary: 'A new signing secret for a webhook endpoint',
      description: 'For a while (previous_secret_expires_at) deliveries carry a signature with each secret.',
      answers: { 200: jsonResponse('The endpoint and its new secret (shown once)', adminSchemas.webhookWithSecret) },
      invalid: 'webhook_id',
    },
    async (req, res, id) => {
      const { endpoint, secret } = await webhooks.rotateSecret(id);
      await record(req, res, 'webhook.secret_rotated', id, { app_id: endpoint.appId });
      res.json({ ...publicEndpoint(endpoint), secret });
    },
  );

  onEndpoint(
    'GET',
    '/webhooks/:webhook_id/deliveries',
    {
      summary: 'The deliveries to a webhook endpoint, newest first, each with its attempts',
      query: deliveriesQuery,
      answers: { 200: jsonResponse('The deliveries', { type: 'array', items: adminSchemas.deliveryWithLog }) },
      invalid: 'webhook_id or limit',
    },
    async (req, res, id) => {
      const { limit } = validate(deliveriesQuery, { limit: req.query.limit }) as { limit: number };
      res.json((await webhooks.deliveries(id, limit)).map(withLog));
    },
  );

  adminRoute(
    router,
    'POST',
    '/webhook-deliveries/:delivery_id/redeliver',
    {
      summary: 'Send a delivery again (queued now, whatever its status)',
      tags,
      params: deliveryParams,
      responses: {
        202: jsonResponse('The delivery, pending', adminSchemas.delivery),
        400: adminValidationResponse('delivery_id'),
        404: adminNotFoundResponse('no webhook delivery with this delivery_id (attribute delivery_id)'),
      },
    },
    async (req, res) => {
      const { delivery_id: id } = validate(deliveryParams, { delivery_id: req.params.delivery_id });
      const delivery = await webhooks.redeliver(id);
      deps.wake?.();
      res.status(202).json(publicDelivery(delivery));
    },
  );

  onEndpoint(
    'POST',
    '/webhooks/:webhook_id/test',
    {
      summary: 'Send a test event to a webhook endpoint',
      description:
        'A webhook.test event ("test": true in its payload) queued for this endpoint only, delivered, signed and retried ' +
        'like any other; its delivery is in the delivery log. The same operation as the app API’s.',
      answers: { 202: jsonResponse('Queued', testEventQueued) },
      invalid: 'webhook_id',
      conflict: errorResponse('webhook_disabled: the endpoint is disabled; enable it first'),
    },
    async (req, res, id) => {
      const sent = await webhooks.sendTest(id);
      await record(req, res, 'webhook.test_sent', id, { event_id: sent.eventId });
      deps.wake?.();
      res.status(202).json({ webhook_id: id, event_id: sent.eventId, type: sent.type });
    },
  );

  onEndpoint(
    'POST',
    '/webhooks/:webhook_id/recover',
    {
      summary: 'Deliver again the events since a time whose delivery to this endpoint failed',
      description:
        'One new delivery (same webhook-id) for each event since `since` whose delivery to this endpoint failed for good ' +
        'and that it has not received since. The same operation as the app API’s.',
      body: { contentType: 'application/json', schema: replaySchema },
      answers: { 202: jsonResponse('Queued', recoverQueued) },
      invalid: 'webhook_id or since',
    },
    async (req, res, id) => {
      const since = validate(replaySchema, req.body).since as Date;
      const deliveries = await webhooks.recover(id, since);
      await record(req, res, 'webhook.recovered', id, { since: since.toISOString(), deliveries });
      deps.wake?.();
      res.status(202).json({ webhook_id: id, since: since.toISOString(), deliveries });
    },
  );
}
