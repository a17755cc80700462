import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import { endpoint, errorResponse, errors, jsonResponse, sendJson, validate } from '@attest/common';
import { apiKeyAuthentication, appActor, verifiedKey, type ApiKeyAuthDeps } from '../kernel/api-keys/api-key-auth';
import { apiKeyResponses } from '../kernel/openapi';
import { PAYMENT_REQUEST_ID } from './create-request';
import type { PaymentRequestService } from './payment-request-service';
import { PAYMENT_REQUEST_SCHEMA } from './payment-request.openapi';

export interface PaymentRequestRouteDeps extends ApiKeyAuthDeps {
  paymentRequests: Pick<PaymentRequestService, 'get' | 'cancel'>;
}

/**
 * GET /api/v2/client/payment-requests/{id} and POST /api/v2/client/payment-requests/{id}/cancel, with the
 * app's API key (the key names the app).
 */
export function paymentRequestRoute(router: Router, deps: PaymentRequestRouteDeps): void {
  const idParams = Joi.object({
    id: Joi.string()
      .pattern(PAYMENT_REQUEST_ID)
      .required()
      .messages({ 'string.pattern.base': 'id must be pr_ followed by 32 hexadecimal digits.' }),
  });
  // a well-formed id (the usual read) is taken as is; anything else goes through the schema, which names what is wrong
  const read = async (req: Request, res: Response) => {
    const raw = req.params.id;
    const id = typeof raw === 'string' && PAYMENT_REQUEST_ID.test(raw) ? raw : validate(idParams, { id: raw }).id;
    const view = await deps.paymentRequests.get(verifiedKey(res).appId, id);
    if (!view) throw errors.notFound('No payment request with this id for this app.', 'id');
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, view);
  };

  const cancel = async (req: Request, res: Response) => {
    const { id } = validate(idParams, { id: req.params.id });
    const view = await deps.paymentRequests.cancel(verifiedKey(res).appId, id, appActor(req, res));
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, view);
  };

  const one = (description: string) => jsonResponse(description, PAYMENT_REQUEST_SCHEMA);
  const auth = apiKeyAuthentication(deps);
  endpoint(
    router,
    '/api/v2/client/payment-requests/:id',
    { GET: [...auth, read] },
    {
      GET: {
        summary: 'A payment request with its payments, amounts, blocks, confirmations and reason',
        description: 'A pending request past its expiry is expired when read (the periodic sweep does it otherwise).',
        tags: ['payment requests'],
        security: [{ apiKey: [] }],
        params: idParams,
        responses: {
          200: one('The request'),
          400: errorResponse('invalid_parameter: id is not pr_ and 32 hexadecimal digits'),
          ...apiKeyResponses,
          404: errorResponse('not_found: no payment request with this id for this app'),
        },
      },
    },
  );
  endpoint(
    router,
    '/api/v2/client/payment-requests/:id/cancel',
    { POST: [...auth, cancel] },
    {
      POST: {
        summary: 'Cancel an open payment request',
        description:
          'Only a pending request (nothing received, no payment in a block) can be canceled: it becomes `canceled` ' +
          '(reason canceled, webhook payment_request.canceled, audit record). A payment that arrives afterwards is ' +
          'recorded and flagged like a late one — the request becomes paid_late with reason paid_after_cancel — never paid. No body.',
        tags: ['payment requests'],
        security: [{ apiKey: [] }],
        params: idParams,
        responses: {
          200: one('The request, canceled'),
          400: errorResponse('invalid_parameter: id is not pr_ and 32 hexadecimal digits'),
          ...apiKeyResponses,
          404: errorResponse('not_found: no payment request with this id for this app'),
          409: errorResponse(
            'payment_request_not_open (attribute id): the request is not pending (detected, paid, expired, canceled, …); the detail names its status',
          ),
        },
      },
    },
  );
}
