import type { Request, RequestHandler, Response, Router } from 'express';
import Joi from 'joi';
import {
  bodyErrorResponses,
  clientAddress,
  endpoint,
  errorResponse,
  jsonBody,
  jsonResponse,
  validate,
  type AuditActor,
  type AuditLog,
  type ResponseDoc,
} from '@attest/common';
import {
  addSchema,
  deliveriesQuery,
  endpointFields,
  replaySchema,
  updateEndpoint,
  updateSchema,
} from '../admin/webhook-admin-routes';
import type { WebhookService } from '../domain/webhook-service';
import { apiKeyAuthentication, verifiedKey, type ApiKeyAuthDeps } from './api-key-auth';
import { apiKeyResponses, publicSchemas } from './openapi-document';
import { requireJson } from './record-transaction-route';
import { publicDelivery, publicEndpoint, testEventQueued, withLog } from './webhook-json';

export interface WebhooksRouteDeps extends ApiKeyAuthDeps {
  webhooks: WebhookService;
  audit?: Pick<AuditLog, 'record'>;
  bodyLimit: string;
  /** New deliveries are due: look now rather than at the next poll. */
  wake?: () => void;
}

const WEBHOOK_ID = Joi.string()
  .pattern(/^wh_[0-9a-f]{32}$/)
  .required()
  .messages({ 'string.pattern.base': 'webhook_id must be wh_ followed by 32 hexadecimal digits' });
const webhookParams = Joi.object({ webhook_id: WEBHOOK_ID });
const deliveryParams = Joi.object({
  webhook_id: WEBHOOK_ID,
  delivery_id: Joi.string()
    .pattern(/^whd_[0-9a-f]{32}$/)
    .required()
    .messages({ 'string.pattern.base': 'delivery_id must be whd_ followed by 32 hexadecimal digits' }),
});

const BASE = '/api/v2/client/webhooks';
const tags = ['webhooks'];
const security = [{ apiKey: [] }];
const noWebhook = errorResponse('not_found (attribute webhook_id): no webhook endpoint with this id for your app');
const endpointAnswer = (description: string) => jsonResponse(description, publicSchemas.webhook);

const appActor = (req: Request, res: Response): AuditActor => ({
  type: 'app',
  id: verifiedKey(res).keyId,
  requestId: req.id,
  clientAddress: clientAddress(req),
});

/**
 * The app's own webhook endpoints, with its API key (issue #25): add, list, read, change (url, description,
 * event-type filter, enabled), remove, rotate the secret, disable and enable again, a test event, recover
 * the failed deliveries since a time, the delivery log and redelivery. Another app's endpoint is 404.
 */
export function webhooksRoute(router: Router, deps: WebhooksRouteDeps): void {
  const { webhooks, audit } = deps;
  const auth = apiKeyAuthentication(deps);
  const body: RequestHandler[] = [requireJson, jsonBody(deps.bodyLimit)];
  const appOf = (res: Response) => verifiedKey(res).appId;
  /** The endpoint of the path, when it is the app's. */
  const owned = async (req: Request, res: Response) => {
    const { webhook_id: id } = validate(webhookParams, { webhook_id: req.params.webhook_id });
    return webhooks.get(id as string, appOf(res));
  };
  const record = (req: Request, res: Response, type: string, subject: string, detail: Record<string, unknown> = {}) =>
    audit?.record({ type, actor: appActor(req, res), subject, detail: { app_id: appOf(res), ...detail } });
  const answer = (res: Response, status: number, value: unknown) =>
    res.status(status).set('Cache-Control', 'no-store').json(value);
  const withBody = (badRequest: string, rest: Record<number, ResponseDoc>): Record<number, ResponseDoc> => ({
    ...bodyErrorResponses(badRequest),
    ...apiKeyResponses,
    ...rest,
  });

  endpoint(
    router,
    BASE,
    {
      GET: [
        ...auth,
        async (_req, res) => {
          answer(res, 200, (await webhooks.list(appOf(res))).map(publicEndpoint));
        },
      ],
      POST: [
        ...auth,
        ...body,
        async (req, res) => {
          const input = validate(addSchema, req.body);
          const { endpoint: made, secret } = await webhooks.add(appOf(res), input.url as string, endpointFields(input));
          await record(req, res, 'webhook.added', made.id, { url: made.url, enabled_events: made.enabledEvents });
          answer(res, 201, { ...publicEndpoint(made), secret });
        },
      ],
    },
    {
      GET: {
        summary: 'Your webhook endpoints (never their secrets)',
        tags,
        security,
        responses: {
          200: jsonResponse('The endpoints, oldest first', { type: 'array', items: publicSchemas.webhook }),
          ...apiKeyResponses,
        },
      },
      POST: {
        summary: 'Add a webhook endpoint',
        description:
          'Your events are POSTed to it, signed (Standard Webhooks) with the secret in this answer only. ' +
          'enabled_events limits them to some types (transaction.mined, or a family: transaction.*); empty or absent: all.',
        tags,
        security,
        body: { contentType: 'application/json', schema: addSchema },
        responses: withBody(
          'invalid_content_type, required or invalid_parameter naming the field: url (https, a public host), description, enabled_events (an unknown event type)',
          {
            201: jsonResponse('The endpoint and its signing secret (shown once)', publicSchemas.webhookWithSecret),
            409: errorResponse('too_many_webhooks: the app has 20 endpoints already'),
          },
        ),
      },
    },
  );

  endpoint(
    router,
    `${BASE}/:webhook_id`,
    {
      GET: [
        ...auth,
        async (req, res) => {
          answer(res, 200, publicEndpoint(await owned(req, res)));
        },
      ],
      PATCH: [
        ...auth,
        ...body,
        async (req, res) => {
          const { id } = await owned(req, res);
          const input = validate(updateSchema, req.body);
          const changed = await updateEndpoint(webhooks, id, input, 'disabled by the app');
          await record(req, res, 'webhook.updated', id, { changed: Object.keys(input) });
          if (input.enabled === true) deps.wake?.();
          answer(res, 200, publicEndpoint(changed));
        },
      ],
      DELETE: [
        ...auth,
        async (req, res) => {
          const { id } = await owned(req, res);
          const removed = await webhooks.remove(id);
          await record(req, res, 'webhook.removed', id, { url: removed.url });
          answer(res, 200, { ...publicEndpoint(removed), removed: true });
        },
      ],
    },
    {
      GET: {
        summary: 'One of your webhook endpoints',
        tags,
        security,
        params: webhookParams,
        responses: {
          200: endpointAnswer('The endpoint'),
          400: errorResponse('invalid_parameter (webhook_id)'),
          ...apiKeyResponses,
          404: noWebhook,
        },
      },
      PATCH: {
        summary: 'Change a webhook endpoint: url, description, event-type filter, enabled',
        description:
          'Only the fields given change. enabled: false disables it (nothing new is queued for it; waiting deliveries wait); ' +
          'enabled: true enables it again with the same secret and its delivery log, its failure count reset.',
        tags,
        security,
        params: webhookParams,
        body: { contentType: 'application/json', schema: updateSchema },
        responses: withBody(
          'invalid_content_type, invalid_parameter naming the field (webhook_id, url, description, enabled_events, enabled), or none given',
          {
            200: endpointAnswer('The endpoint as it is now'),
            404: noWebhook,
          },
        ),
      },
      DELETE: {
        summary: 'Remove a webhook endpoint, with its delivery log',
        tags,
        security,
        params: webhookParams,
        responses: {
          200: jsonResponse('The endpoint as it was, with removed: true', publicSchemas.removedWebhook),
          400: errorResponse('invalid_parameter (webhook_id)'),
          ...apiKeyResponses,
          404: noWebhook,
        },
      },
    },
  );

  const action = (
    path: string,
    doc: { summary: string; description?: string; 200: ResponseDoc },
    run: (req: Request, res: Response, id: string) => Promise<void>,
  ) =>
    endpoint(
      router,
      `${BASE}/:webhook_id/${path}`,
      {
        POST: [
          ...auth,
          async (req, res) => {
            const { id } = await owned(req, res);
            await run(req, res, id);
          },
        ],
      },
      {
        POST: {
          summary: doc.summary,
          ...(doc.description ? { description: doc.description } : {}),
          tags,
          security,
          params: webhookParams,
          responses: {
            200: doc[200],
            400: errorResponse('invalid_parameter (webhook_id)'),
            ...apiKeyResponses,
            404: noWebhook,
          },
        },
      },
    );

  action(
    'rotate-secret',
    {
      summary: 'A new signing secret (shown once)',
      description: 'For 24 hours (previous_secret_expires_at) deliveries carry a signature with each secret.',
      200: jsonResponse('The endpoint and its new secret (shown once)', publicSchemas.webhookWithSecret),
    },
    async (req, res, id) => {
      const { endpoint: rotated, secret } = await webhooks.rotateSecret(id);
      await record(req, res, 'webhook.secret_rotated', id);
      answer(res, 200, { ...publicEndpoint(rotated), secret });
    },
  );

  action(
    'disable',
    {
      summary: 'Disable a webhook endpoint: nothing new is queued for it, waiting deliveries wait',
      200: endpointAnswer('The endpoint, disabled'),
    },
    async (req, res, id) => {
      const { endpoint: disabled, changed } = await webhooks.disable(id, 'disabled by the app');
      if (changed) await record(req, res, 'webhook.disabled', id);
      answer(res, 200, publicEndpoint(disabled));
    },
  );

  action(
    'enable',
    {
      summary: 'Enable a disabled webhook endpoint again',
      description:
        'With the same secret and its delivery log; its failure count and throttling are reset and deliveries that ' +
        'waited are sent. Events of the time it was disabled were not queued for it: recover or the events list has them.',
      200: endpointAnswer('The endpoint, enabled'),
    },
    async (req, res, id) => {
      const { endpoint: enabled, changed } = await webhooks.enable(id);
      if (changed) await record(req, res, 'webhook.enabled', id);
      deps.wake?.();
      answer(res, 200, publicEndpoint(enabled));
    },
  );

  endpoint(
    router,
    `${BASE}/:webhook_id/test`,
    {
      POST: [
        ...auth,
        async (req, res) => {
          const { id } = await owned(req, res);
          const sent = await webhooks.sendTest(id, appOf(res));
          deps.wake?.();
          answer(res, 202, { webhook_id: id, event_id: sent.eventId, type: sent.type });
        },
      ],
    },
    {
      POST: {
        summary: 'Send a test event to this endpoint',
        description:
          'A webhook.test event, with "test": true in its payload, queued for this endpoint only and delivered, signed and ' +
          'retried like any other (its delivery is in the delivery log); not in the events list.',
        tags,
        security,
        params: webhookParams,
        responses: {
          202: jsonResponse('Queued', testEventQueued),
          400: errorResponse('invalid_parameter (webhook_id)'),
          ...apiKeyResponses,
          404: noWebhook,
          409: errorResponse('webhook_disabled: the endpoint is disabled; enable it first'),
        },
      },
    },
  );

  endpoint(
    router,
    `${BASE}/:webhook_id/recover`,
    {
      POST: [
        ...auth,
        ...body,
        async (req, res) => {
          const { id } = await owned(req, res);
          const since = validate(replaySchema, req.body).since as Date;
          const deliveries = await webhooks.recover(id, since, appOf(res));
          await record(req, res, 'webhook.recovered', id, { since: since.toISOString(), deliveries });
          deps.wake?.();
          answer(res, 202, { webhook_id: id, since: since.toISOString(), deliveries });
        },
      ],
    },
    {
      POST: {
        summary: 'Deliver again the events since a time whose delivery to this endpoint failed',
        description:
          'One new delivery (same webhook-id) for each event since `since` whose delivery to this endpoint failed for good ' +
          'and that it has not received since; events it received are not sent again.',
        tags,
        security,
        params: webhookParams,
        body: { contentType: 'application/json', schema: replaySchema },
        responses: withBody('invalid_content_type, required or invalid_parameter (webhook_id, since)', {
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
          404: noWebhook,
        }),
      },
    },
  );

  endpoint(
    router,
    `${BASE}/:webhook_id/deliveries`,
    {
      GET: [
        ...auth,
        async (req, res) => {
          const { id } = await owned(req, res);
          const { limit } = validate(deliveriesQuery, { limit: req.query.limit }) as { limit: number };
          answer(res, 200, (await webhooks.deliveries(id, limit)).map(withLog));
        },
      ],
    },
    {
      GET: {
        summary: 'The delivery log: deliveries to this endpoint, newest first, each with its attempts',
        tags,
        security,
        params: webhookParams,
        query: deliveriesQuery,
        responses: {
          200: jsonResponse('The deliveries', { type: 'array', items: publicSchemas.deliveryWithLog }),
          400: errorResponse('invalid_parameter (webhook_id, limit)'),
          ...apiKeyResponses,
          404: noWebhook,
        },
      },
    },
  );

  endpoint(
    router,
    `${BASE}/:webhook_id/deliveries/:delivery_id/redeliver`,
    {
      POST: [
        ...auth,
        async (req, res) => {
          const params = validate(deliveryParams, {
            webhook_id: req.params.webhook_id,
            delivery_id: req.params.delivery_id,
          });
          const { id } = await webhooks.get(params.webhook_id as string, appOf(res));
          const delivery = await webhooks.redeliver(params.delivery_id as string, id);
          deps.wake?.();
          answer(res, 202, publicDelivery(delivery));
        },
      ],
    },
    {
      POST: {
        summary: 'Send a delivery again (a new delivery of the same event, same webhook-id, queued now)',
        tags,
        security,
        params: deliveryParams,
        responses: {
          202: jsonResponse('The new delivery, pending', publicSchemas.delivery),
          400: errorResponse('invalid_parameter (webhook_id, delivery_id)'),
          ...apiKeyResponses,
          404: errorResponse('not_found: no such endpoint (webhook_id) or delivery to it (delivery_id) for your app'),
        },
      },
    },
  );
}
