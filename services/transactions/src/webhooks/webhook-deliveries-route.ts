import type { Router } from 'express';
import { endpoint, errorResponse, jsonResponse, validate } from '@attest/common';
import { apiKeyResponses } from '../kernel/openapi';
import { deliveriesQuery } from './webhook-fields';
import { publicDelivery, withLog } from './webhook-json';
import { webhookRouteKit, type WebhookRouteKitDeps } from './webhook-route-kit';
import { publicSchemas } from './webhooks.openapi';

export type WebhookDeliveriesRouteDeps = Omit<WebhookRouteKitDeps, 'audit'>;

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
