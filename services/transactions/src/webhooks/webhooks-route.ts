import type { Router } from 'express';
import { endpoint, errorResponse, jsonResponse, validate } from '@attest/common';
import { apiKeyResponses } from '../kernel/openapi';
import { addSchema, endpointFields, updateEndpoint, updateSchema } from './webhook-fields';
import { publicEndpoint } from './webhook-json';
import { jsonBodyOf, webhookRouteKit, type WebhookRouteKitDeps } from './webhook-route-kit';
import { publicSchemas } from './webhooks.openapi';

export interface WebhooksRouteDeps extends WebhookRouteKitDeps {
  bodyLimit: string;
}

/**
 * /api/v2/client/webhooks and /api/v2/client/webhooks/{webhook_id}: the app's own webhook endpoints, with
 * its API key (issue #25): add, list, read, change (url, description, event-type filter, enabled), remove.
 * Another app's endpoint is 404.
 */
export function webhooksRoute(router: Router, deps: WebhooksRouteDeps): void {
  const kit = webhookRouteKit(deps);
  const { webhooks, auth, owned, record, answer, appOf, BASE, tags, security, noWebhook, endpointAnswer } = kit;
  const { webhookParams, withBody } = kit;
  const body = jsonBodyOf(deps.bodyLimit);

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
}
