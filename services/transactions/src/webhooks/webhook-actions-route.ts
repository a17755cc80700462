import type { Request, Response, Router } from 'express';
import { endpoint, errorResponse, jsonResponse, validate, type ResponseDoc } from '@attest/common';
import { apiKeyResponses } from '../kernel/openapi';
import { replaySchema } from './webhook-fields';
import { publicEndpoint } from './webhook-json';
import { jsonBodyOf, webhookRouteKit, type WebhookRouteKitDeps } from './webhook-route-kit';
import { publicSchemas, recoverQueued, testEventQueued } from './webhooks.openapi';

export interface WebhookActionsRouteDeps extends WebhookRouteKitDeps {
  bodyLimit: string;
}

/**
 * /api/v2/client/webhooks/{webhook_id}/…: rotate the secret, disable and enable again, a test event,
 * recover the failed deliveries since a time; the app's own endpoints only (another app's is 404).
 */
export function webhookActionsRoute(router: Router, deps: WebhookActionsRouteDeps): void {
  const kit = webhookRouteKit(deps);
  const { webhooks, auth, owned, record, answer, appOf, BASE, tags, security, noWebhook, endpointAnswer } = kit;
  const { webhookParams, withBody } = kit;
  const body = jsonBodyOf(deps.bodyLimit);

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
          202: jsonResponse('Queued', recoverQueued),
          404: noWebhook,
        }),
      },
    },
  );
}
