import type { Router } from 'express';
import Joi from 'joi';
import {
  adminRoute,
  adminNotFoundResponse,
  adminValidationResponse,
  errors,
  jsonResponse,
  validate,
} from '@attest/common';
import { appIdOf } from '../kernel/admin-route';
import { appIdParams } from '../kernel/admin-params';
import { PAYMENT_REQUEST_STATUSES } from '../kernel/events';
import { listPage, listPageSchema, listQuery, listQuerySchema } from '../kernel/list-query';
import { PAYMENT_REQUEST_ID } from './create-request';
import type { PaymentRequestService } from './payment-request-service';
import { PAYMENT_REQUEST_SCHEMA } from './payment-request.openapi';

const requestParams = appIdParams.keys({
  id: Joi.string()
    .pattern(PAYMENT_REQUEST_ID)
    .required()
    .messages({ 'string.pattern.base': 'id must be pr_ followed by 32 hexadecimal digits' }),
});

export interface PaymentRequestsAdminDeps {
  paymentRequests: Pick<PaymentRequestService, 'list' | 'get'>;
}

/**
 * An app's payment requests, read by an operator or the developer portal (issue #27): the same
 * PaymentRequestService, and the same answers, as the app API's GET /api/v2/client/payment-requests.
 */
export function paymentRequestsAdminRoutes(router: Router, deps: PaymentRequestsAdminDeps): void {
  adminRoute(
    router,
    'GET',
    '/apps/:app_id/payment-requests',
    {
      summary: 'An app’s payment requests, oldest first, paged; by reference, status or since',
      tags: ['payment requests'],
      params: appIdParams,
      query: listQuerySchema(PAYMENT_REQUEST_STATUSES),
      responses: {
        200: jsonResponse('A page', listPageSchema(PAYMENT_REQUEST_SCHEMA)),
        400: adminValidationResponse('app_id, reference, status, since, cursor or limit'),
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      const q = listQuery(req, PAYMENT_REQUEST_STATUSES);
      const { items, next } = await deps.paymentRequests.list({ appId, ...q });
      res.json(listPage(items, next));
    },
  );

  adminRoute(
    router,
    'GET',
    '/apps/:app_id/payment-requests/:id',
    {
      summary: 'One payment request of an app, with its payments, amounts, blocks, confirmations and reason',
      tags: ['payment requests'],
      params: requestParams,
      responses: {
        200: jsonResponse('The request', PAYMENT_REQUEST_SCHEMA),
        400: adminValidationResponse('app_id or id'),
        404: adminNotFoundResponse('no payment request with this id for this app (attribute id)'),
      },
    },
    async (req, res) => {
      const { app_id: appId, id } = validate(requestParams, { app_id: req.params.app_id, id: req.params.id });
      const view = await deps.paymentRequests.get(appId as string, id as string);
      if (!view) throw errors.notFound('No payment request with this id for this app.', 'id');
      res.json(view);
    },
  );
}
