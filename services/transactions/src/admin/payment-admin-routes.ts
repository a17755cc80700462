import type { Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  documentAdminRoute,
  errors,
  jsonResponse,
  validate,
} from '@attest/common';
import { PAYMENT_REQUEST_ID, type PaymentRequestService } from '../domain/payment-requests';
import { PAYMENT_REQUEST_STATUSES } from '../domain/webhook-events';
import type { WebhookService } from '../domain/webhook-service';
import { eventsPage, eventsQuery } from '../routes/events-route';
import { encodeCursor, listQuery, listQuerySchema, PAYMENT_REQUEST_SCHEMA } from '../routes/payment-requests-route';
import { transactionsSchemas } from './admin-document';
import { appIdParams } from './admin-routes';

const requestParams = appIdParams.keys({
  id: Joi.string()
    .pattern(PAYMENT_REQUEST_ID)
    .required()
    .messages({ 'string.pattern.base': 'id must be pr_ followed by 32 hexadecimal digits' }),
});

/**
 * An app's payment requests and its events, read by an operator or the developer portal (issue #27): the
 * same PaymentRequestService and events store, and the same answers, as the app API's
 * GET /api/v2/client/payment-requests and /api/v2/client/events.
 */
export function paymentAdminRoutes(
  router: Router,
  deps: { paymentRequests: PaymentRequestService; webhooks: WebhookService },
): void {
  documentAdminRoute(router, 'GET', '/apps/:app_id/payment-requests', {
    summary: 'An app’s payment requests, oldest first, paged; by reference, status or since',
    tags: ['payment requests'],
    params: appIdParams,
    query: listQuerySchema(PAYMENT_REQUEST_STATUSES),
    responses: {
      200: jsonResponse('A page', {
        type: 'object',
        required: ['data', 'next_cursor'],
        properties: {
          data: { type: 'array', items: PAYMENT_REQUEST_SCHEMA },
          next_cursor: { type: ['string', 'null'], description: 'Pass as cursor for the next page; null on the last' },
        },
      }),
      400: adminValidationResponse('app_id, reference, status, since, cursor or limit'),
    },
  });
  router.get('/apps/:app_id/payment-requests', async (req, res) => {
    const { app_id: appId } = validate(appIdParams, { app_id: req.params.app_id });
    const q = listQuery(req, PAYMENT_REQUEST_STATUSES);
    const { items, next } = await deps.paymentRequests.list({ appId, ...q });
    res.json({ data: items, next_cursor: next ? encodeCursor(next) : null });
  });

  documentAdminRoute(router, 'GET', '/apps/:app_id/payment-requests/:id', {
    summary: 'One payment request of an app, with its payments, amounts, blocks, confirmations and reason',
    tags: ['payment requests'],
    params: requestParams,
    responses: {
      200: jsonResponse('The request', PAYMENT_REQUEST_SCHEMA),
      400: adminValidationResponse('app_id or id'),
      404: adminNotFoundResponse('no payment request with this id for this app (attribute id)'),
    },
  });
  router.get('/apps/:app_id/payment-requests/:id', async (req, res) => {
    const { app_id: appId, id } = validate(requestParams, { app_id: req.params.app_id, id: req.params.id });
    const view = await deps.paymentRequests.get(appId as string, id as string);
    if (!view) throw errors.notFound('No payment request with this id for this app.', 'id');
    res.json(view);
  });

  documentAdminRoute(router, 'GET', '/apps/:app_id/events', {
    summary: 'An app’s events, oldest first, after a cursor (test events are not listed)',
    tags: ['events'],
    params: appIdParams,
    query: eventsQuery,
    responses: {
      200: jsonResponse('A page of events', transactionsSchemas.eventPage),
      400: adminValidationResponse('app_id, after (not one of the app’s retained events), limit or type'),
    },
  });
  router.get('/apps/:app_id/events', async (req, res) => {
    const { app_id: appId } = validate(appIdParams, { app_id: req.params.app_id });
    res.json(
      await eventsPage(deps.webhooks, appId as string, {
        after: req.query.after,
        limit: req.query.limit,
        type: req.query.type,
      }),
    );
  });
}
