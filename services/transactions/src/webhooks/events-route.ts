import type { Response, Router } from 'express';
import Joi from 'joi';
import {
  adminRoute,
  adminValidationResponse,
  endpoint,
  errorResponse,
  errors,
  jsonResponse,
  validate,
} from '@attest/common';
import { appIdOf } from '../kernel/admin-route';
import { appIdParams } from '../kernel/admin-params';
import { apiKeyAuthentication, verifiedKey, type ApiKeyAuthDeps } from '../kernel/api-keys/api-key-auth';
import { apiKeyResponses } from '../kernel/openapi';
import { eventFilter, MAX_EVENT_FILTERS } from './webhook-filters';
import { publicEvent } from './webhook-json';
import type { WebhookService } from './webhook-service';
import { adminSchemas, publicSchemas } from './webhooks.openapi';

export interface EventsRouteDeps extends ApiKeyAuthDeps {
  webhooks: Pick<WebhookService, 'events' | 'event'>;
}

export interface EventsAdminDeps {
  webhooks: Pick<WebhookService, 'events'>;
}

const EVENT_ID = Joi.string()
  .pattern(/^msg_[0-9a-f]{32}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be an event id: msg_ followed by 32 hexadecimal digits' });

/** GET /api/v2/client/events?cursor=&limit=&type= (after: cursor's older name, still taken) */
export const eventsQuery = Joi.object({
  cursor: EVENT_ID.description(
    'The last event_id you have read (next_cursor of the previous page); absent: from the oldest',
  ),
  after: EVENT_ID.description('The older name of cursor (next_after of the previous page), still taken'),
  limit: Joi.number().integer().min(1).max(100).default(50).messages({
    'number.base': 'limit must be a whole number from 1 to 100',
    'number.integer': 'limit must be a whole number from 1 to 100',
    'number.min': 'limit must be a whole number from 1 to 100',
    'number.max': 'limit must be a whole number from 1 to 100',
  }),
  type: Joi.string()
    .max(2000)
    .description(
      'Only these event types, comma-separated; each a type (transaction.mined) or a family (transaction.*)',
    ),
});
/**
 * A page of an app's events after a cursor, for the query as given (after, limit, type): the app API's
 * events list and the admin API's (the portal's events view) answer with it.
 */
export async function eventsPage(
  webhooks: Pick<WebhookService, 'events'>,
  appId: string,
  raw: { cursor?: unknown; after: unknown; limit: unknown; type: unknown },
) {
  const query = validate(eventsQuery, raw) as { cursor?: string; after?: string; limit: number; type?: string };
  if (query.cursor !== undefined && query.after !== undefined && query.cursor !== query.after)
    throw errors.invalidParameter(
      'cursor',
      'cursor and after are the same parameter (after is its older name); give one.',
    );
  const after = query.cursor ?? query.after;
  const types =
    query.type === undefined
      ? null
      : eventFilter(
          query.type
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean),
          'type',
        );
  const page = await webhooks.events(
    appId,
    after,
    query.limit + 1,
    types,
    query.cursor !== undefined ? 'cursor' : 'after',
  );
  const data = page.slice(0, query.limit).map(publicEvent);
  const next = data.at(-1)?.event_id ?? after ?? null;
  return { data, has_more: page.length > query.limit, next_cursor: next, next_after: next };
}

const eventParams = Joi.object({ event_id: EVENT_ID.required() });

/**
 * The pull path (issue #25): the app's events oldest first after a cursor, and one event by id, for a
 * backend behind a firewall or on a laptop. The same events, with the same ids and payloads, its endpoints
 * are sent; kept WEBHOOK_EVENT_RETENTION_DAYS.
 */
export function eventsRoute(router: Router, deps: EventsRouteDeps): void {
  const auth = apiKeyAuthentication(deps);
  const appOf = (res: Response) => verifiedKey(res).appId;

  endpoint(
    router,
    '/api/v2/client/events',
    {
      GET: [
        ...auth,
        async (req, res) => {
          res.set('Cache-Control', 'no-store').json(
            await eventsPage(deps.webhooks, appOf(res), {
              cursor: req.query.cursor,
              after: req.query.after,
              limit: req.query.limit,
              type: req.query.type,
            }),
          );
        },
      ],
    },
    {
      GET: {
        summary: 'Your events, oldest first, after a cursor',
        description:
          'Every event of your app (transaction.*, webhook_endpoint.*, …) with the payload its endpoints are sent, in an ' +
          'order that never changes: read pages with cursor=next_cursor until has_more is false, then poll with the last ' +
          `next_cursor (after and next_after are their older names, still taken and answered). type filters (at most ${MAX_EVENT_FILTERS}, comma-separated). Events are kept ` +
          'WEBHOOK_EVENT_RETENTION_DAYS (30 by default); test events are not listed.',
        tags: ['events'],
        security: [{ apiKey: [] }],
        query: eventsQuery,
        responses: {
          200: jsonResponse('A page of events', publicSchemas.eventPage),
          400: errorResponse(
            'invalid_parameter: cursor or after (not one of your retained events; both given and different), limit, or type (an unknown event type)',
          ),
          ...apiKeyResponses,
        },
      },
    },
  );

  endpoint(
    router,
    '/api/v2/client/events/:event_id',
    {
      GET: [
        ...auth,
        async (req, res) => {
          const { event_id: id } = validate(eventParams, { event_id: req.params.event_id });
          res.set('Cache-Control', 'no-store').json(publicEvent(await deps.webhooks.event(appOf(res), id as string)));
        },
      ],
    },
    {
      GET: {
        summary: 'One of your events',
        tags: ['events'],
        security: [{ apiKey: [] }],
        params: eventParams,
        responses: {
          200: jsonResponse('The event', publicSchemas.event),
          400: errorResponse('invalid_parameter (event_id)'),
          ...apiKeyResponses,
          404: errorResponse('not_found (attribute event_id): no such event of your app (or no longer retained)'),
        },
      },
    },
  );
}

/**
 * GET /admin/apps/{app_id}/events: an app's events, read by an operator or the developer portal (issue #27),
 * with the same answers as the app API's GET /api/v2/client/events.
 */
export function eventsAdminRoute(router: Router, deps: EventsAdminDeps): void {
  adminRoute(
    router,
    'GET',
    '/apps/:app_id/events',
    {
      summary: 'An app’s events, oldest first, after a cursor (test events are not listed)',
      tags: ['events'],
      params: appIdParams,
      query: eventsQuery,
      responses: {
        200: jsonResponse('A page of events', adminSchemas.eventPage),
        400: adminValidationResponse('app_id, cursor or after (not one of the app’s retained events), limit or type'),
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      res.json(
        await eventsPage(deps.webhooks, appId as string, {
          cursor: req.query.cursor,
          after: req.query.after,
          limit: req.query.limit,
          type: req.query.type,
        }),
      );
    },
  );
}
