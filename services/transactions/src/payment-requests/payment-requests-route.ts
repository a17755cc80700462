import type { Request, Response, Router } from 'express';
import { bodyErrorResponses, endpoint, errorResponse, jsonBody, jsonResponse } from '@attest/common';
import {
  apiKeyAuthentication,
  appActor,
  invalidApp,
  verifiedKey,
  type ApiKeyAuthDeps,
} from '../kernel/api-keys/api-key-auth';
import type { ChainTokens } from '../kernel/chain-tokens';
import { PAYMENT_REQUEST_STATUSES } from '../kernel/events';
import { listPage, listPageSchema, listQuery, listQuerySchema } from '../kernel/list-query';
import { apiKeyResponses, receivingAddressResponses } from '../kernel/openapi';
import { requireJson } from '../kernel/request-fields';
import type { ReceivingAddressService } from '../receiving-addresses';
import { createPaymentRequestSchema, readCreateBody } from './payment-request-body';
import type { PaymentRequestService } from './payment-request-service';
import { PAYMENT_REQUEST_SCHEMA } from './payment-request.openapi';

export interface PaymentRequestsRouteDeps extends ApiKeyAuthDeps {
  paymentRequests: Pick<PaymentRequestService, 'create' | 'get' | 'list'>;
  tokens: ChainTokens;
  bodyLimit: string;
  /** `to` must be one of the app's receiving addresses on the chain (issue 40, item 1). */
  receivingAddresses: Pick<ReceivingAddressService, 'requireReceivingAddress'>;
}

/**
 * POST /api/v2/client/payment-requests and GET /api/v2/client/payment-requests (the list), with the app's
 * API key (the key names the app).
 */
export function paymentRequestsRoute(router: Router, deps: PaymentRequestsRouteDeps): void {
  const create = async (req: Request, res: Response) => {
    const { appIdGiven, ...body } = readCreateBody(req.body, deps.tokens);
    const key = verifiedKey(res);
    // app_id is optional, as on POST /api/v2/client/transaction: the key names the app; a given one must be it
    if (appIdGiven !== undefined && appIdGiven !== key.appId) throw invalidApp();
    await deps.receivingAddresses.requireReceivingAddress(key.appId, body.chain, body.to, 'to');
    const {
      request,
      created,
      view: createdView,
    } = await deps.paymentRequests.create({ appId: key.appId, ...body }, appActor(req, res));
    // a new request answers as committed; the same creation again, as it is now
    const view = createdView ?? (await deps.paymentRequests.get(key.appId, request.id));
    res
      .status(created ? 201 : 200)
      .set('Cache-Control', 'no-store')
      .set('Location', `/api/v2/client/payment-requests/${request.id}`)
      .json(view);
  };

  const list = async (req: Request, res: Response) => {
    const q = listQuery(req, PAYMENT_REQUEST_STATUSES);
    const { items, next } = await deps.paymentRequests.list({ appId: verifiedKey(res).appId, ...q });
    res.set('Cache-Control', 'no-store').json(listPage(items, next));
  };

  const one = (description: string) => jsonResponse(description, PAYMENT_REQUEST_SCHEMA);
  const auth = apiKeyAuthentication(deps);
  endpoint(
    router,
    '/api/v2/client/payment-requests',
    { POST: [...auth, requireJson, jsonBody(deps.bodyLimit), create], GET: [...auth, list] },
    {
      POST: {
        summary: 'Create a payment request: an amount of a token to your address, by an expiry',
        description:
          'Priced in a fiat currency (amount + currency: each accepted token’s amount is fixed now from the prices service’s current ' +
          'price, its observed_at and source kept in `accepted_tokens`; a price that is not fresh is 503 price_unavailable, never an old rate) or in ' +
          'the token (token_amount, one token). The accepted tokens: `token` (one) or `accepted_tokens` (a list), not both. ' +
          '`to` must be one of your app’s receiving addresses on the chain (/api/v2/client/receiving-addresses). ' +
          'The request is settled in the token of its first payment: every payment toward it is in that token. Idempotent per reference: the same body again answers 200 with the same request; a different ' +
          'one 409 reference_taken naming the field. The wallet’s payment is recorded with POST /api/v2/client/transaction and ' +
          'payment_request_id; a transfer to `to` of the token that nobody records is counted too, once final, when it matches ' +
          'this request unambiguously (docs/payments.md). The request then goes pending → detected → paid | paid_over | underpaid | ' +
          'paid_late, or expired, or failed, each with payment_request.* webhook events (payment_request.pending when a detected ' +
          'payment’s block is reorganised away).',
        tags: ['payment requests'],
        security: [{ apiKey: [] }],
        body: { contentType: 'application/json', schema: createPaymentRequestSchema },
        responses: {
          201: one('Created, pending'),
          200: one('The same creation again: the request as it is now'),
          ...bodyErrorResponses(
            'invalid_content_type, required (amount or token_amount, currency with amount, token or accepted_tokens) or ' +
              'invalid_parameter naming the field (token and accepted_tokens both given; several accepted_tokens with token_amount)',
          ),
          ...apiKeyResponses,
          ...receivingAddressResponses,
          409: errorResponse(
            'reference_taken: this app created the reference with a different body; attribute names the field',
          ),
          503: errorResponse(
            'price_unavailable (attribute currency): no fresh price for the token in that currency (the prices service is away, has no fresh price, or its price is older than PAYMENT_PRICE_MAX_AGE_SECONDS); Retry-After',
          ),
        },
      },
      GET: {
        summary: 'Your app’s payment requests, oldest first, paged',
        tags: ['payment requests'],
        security: [{ apiKey: [] }],
        query: listQuerySchema(PAYMENT_REQUEST_STATUSES),
        responses: {
          200: jsonResponse('A page', listPageSchema(PAYMENT_REQUEST_SCHEMA)),
          400: errorResponse('invalid_parameter naming the parameter (status, since, cursor, limit)'),
          ...apiKeyResponses,
        },
      },
    },
  );
}
