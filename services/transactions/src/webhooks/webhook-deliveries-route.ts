import type { Router } from 'express';
import { endpoint, errorResponse, jsonResponse, validate } from '@attest/common';
import Joi from 'joi';
import { cursorSchema, decodeCursor, encodeCursor, limitSchema, listPageSchema } from '../kernel/list-query';
import { apiKeyResponses } from '../kernel/openapi';
import { publicDelivery, withLog } from './webhook-json';
import { webhookRouteKit, type WebhookRouteKitDeps } from './webhook-route-kit';
import { publicSchemas } from './webhooks.openapi';

export type WebhookDeliveriesRouteDeps = Omit<WebhookRouteKitDeps, 'audit'>;

/** GET …/deliveries?limit=&cursor=: the app API's paging convention (the admin API's log takes limit only). */
const deliveriesPageQuery = Joi.object({ limit: limitSchema, cursor: cursorSchema });

/**
 * /api/v2/client/webhooks/{webhook_id}/deliveries: the delivery log of one of the app's endpoints, and
 * redelivery of one of its deliveries.
 */
export function webhookDeliveriesRoute(router: Router, deps: WebhookDeliveriesRouteDeps): void {
  const kit = webhookRouteKit(deps);
  const { webhooks, auth, owned, answer, appOf, BASE, tags, security, noWebhook, webhookParams, deliveryParams } = kit;

  endpoint(
    router,
    `${BASE}/:webhook_id/deliveries`,
    {
      GET: [
        ...auth,
        async (req, res) => {
          const { id } = await owned(req, res);
          const q = validate(deliveriesPageQuery, { limit: req.query.limit, cursor: req.query.cursor }) as {
            limit: number;
            cursor?: string;
          };
          const page = await webhooks.deliveries(id, q.limit + 1, decodeCursor(q.cursor));
          const data = page.slice(0, q.limit);
          const next = page.length > q.limit ? data[data.length - 1].id : null;
          answer(res, 200, { data: data.map(withLog), next_cursor: next ? encodeCursor(next) : null });
        },
      ],
    },
    {
      GET: {
        summary: 'The delivery log: deliveries to this endpoint, newest first, each with its attempts, paged',
        description:
          'Paged like every list of the app API: limit (1 to 100, 50), and cursor = the next_cursor of the previous page.',
        tags,
        security,
        params: webhookParams,
        query: deliveriesPageQuery,
        responses: {
          200: jsonResponse('A page of deliveries', listPageSchema(publicSchemas.deliveryWithLog)),
          400: errorResponse('invalid_parameter (webhook_id, limit, cursor)'),
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
