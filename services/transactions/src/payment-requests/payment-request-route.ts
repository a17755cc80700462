import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import { endpoint, errorResponse, errors, jsonResponse, sendJson, validate } from '@attest/common';
import { apiKeyAuthentication, verifiedKey, type ApiKeyAuthDeps } from '../kernel/api-keys/api-key-auth';
import { apiKeyResponses } from '../kernel/openapi';
import { PAYMENT_REQUEST_ID } from './create-request';
import type { PaymentRequestService } from './payment-request-service';
import { PAYMENT_REQUEST_SCHEMA } from './payment-request.openapi';

export interface PaymentRequestRouteDeps extends ApiKeyAuthDeps {
  paymentRequests: Pick<PaymentRequestService, 'get'>;
}

/** GET /api/v2/client/payment-requests/{id}, with the app's API key (the key names the app). */
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
}
