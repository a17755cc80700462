import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import {
  bodyErrorResponses,
  endpoint,
  errorResponse,
  jsonBody,
  jsonResponse,
  queryParam,
  validate,
} from '@attest/common';
import { apiKeyAuthentication, appActor, verifiedKey, type ApiKeyAuthDeps } from '../kernel/api-keys/api-key-auth';
import { cursorSchema, decodeCursor, limitSchema, listPage, listPageSchema } from '../kernel/list-query';
import { apiKeyResponses } from '../kernel/openapi';
import { requireJson } from '../kernel/request-fields';
import { PAYMENT_REQUEST_ID } from './create-request';
import type { PaymentRequestService } from './payment-request-service';
import { PAYMENT_REQUEST_SCHEMA } from './payment-request.openapi';
import type { RefundService } from './refund-service';
import { REFUND_SCHEMA } from './refund.openapi';

export interface RefundsRouteDeps extends ApiKeyAuthDeps {
  refunds: Pick<RefundService, 'refund' | 'list'>;
  paymentRequests: Pick<PaymentRequestService, 'get'>;
  bodyLimit: string;
}

const idParams = Joi.object({
  id: Joi.string()
    .pattern(PAYMENT_REQUEST_ID)
    .required()
    .messages({ 'string.pattern.base': 'id must be pr_ followed by 32 hexadecimal digits.' }),
});

/** The body of POST /api/v2/client/payment-requests/{id}/refunds; each message names its field. */
export const refundSchema = Joi.object({
  transaction_hash: Joi.string()
    .pattern(/^0x[0-9a-fA-F]{64}$/)
    .required()
    .description('The transaction that sent the refund, final on the request’s chain')
    .messages({ 'string.pattern.base': 'transaction_hash must be 0x followed by 64 hexadecimal digits' }),
  amount: Joi.string()
    .pattern(/^[1-9]\d{0,77}$/)
    .description(
      'Optional: the amount refunded, an integer × 10^6 as amount_paid (the chain decides when left out; when given, the transfer must move exactly it)',
    )
    .messages({
      'string.pattern.base':
        'amount must be a positive integer string (the amount times 10^6), with no sign, decimal point or exponent',
    }),
  chain: Joi.string().trim().lowercase().max(50).description('Optional: the request’s chain (the only one accepted)'),
});

const listSchema = Joi.object({ cursor: cursorSchema, limit: limitSchema });

/**
 * POST and GET /api/v2/client/payment-requests/{id}/refunds, with the app's API key: record a refund the app
 * sent (verified on chain, final, claimed once), and list the request's refunds.
 */
export function refundsRoute(router: Router, deps: RefundsRouteDeps): void {
  const record = async (req: Request, res: Response) => {
    const { id } = validate(idParams, { id: req.params.id });
    const body = validate(refundSchema, req.body) as { transaction_hash: string; amount?: string; chain?: string };
    const appId = verifiedKey(res).appId;
    const { refund, created } = await deps.refunds.refund(
      appId,
      id,
      { transactionHash: body.transaction_hash, amount: body.amount, chain: body.chain },
      appActor(req, res),
    );
    const request = await deps.paymentRequests.get(appId, id);
    res
      .status(created ? 201 : 200)
      .set('Cache-Control', 'no-store')
      .json({ ...refund, payment_request: request });
  };

  const list = async (req: Request, res: Response) => {
    const { id } = validate(idParams, { id: req.params.id });
    const q = validate(listSchema, {
      cursor: queryParam(req.query, 'cursor'),
      limit: queryParam(req.query, 'limit'),
    }) as { cursor?: string; limit: number };
    const page = await deps.refunds.list(verifiedKey(res).appId, id, { after: decodeCursor(q.cursor), limit: q.limit });
    res.set('Cache-Control', 'no-store').json(listPage(page.items, page.next));
  };

  const auth = apiKeyAuthentication(deps);
  const tags = ['payment requests'];
  endpoint(
    router,
    '/api/v2/client/payment-requests/:id/refunds',
    { POST: [...auth, requireJson, jsonBody(deps.bodyLimit), record], GET: [...auth, list] },
    {
      POST: {
        summary: 'Record a refund you sent for a payment request',
        description:
          'You send the refund from your wallet, then record its transaction here. It is verified on chain when recorded, on a final ' +
          'block only (CHAIN_FINALITY, the RPC quorum): a transfer of the token the request was paid in, from one of your receiving ' +
          'addresses, to an address that paid the request (amount: what it moved, or exactly `amount` when given). A transaction that is ' +
          'not final yet is refused (409 refund_not_final, Retry-After): record it again once final. A transaction is claimed once: a ' +
          'payment or another refund holding it is 409 transaction_already_claimed. The request becomes partially_refunded, then refunded ' +
          'when its refunds reach amount_paid (webhooks payment_request.partially_refunded and payment_request.refunded, the refund in ' +
          'data.refund). Recording the same refund again answers 200 with it. Audited.',
        tags,
        security: [{ apiKey: [] }],
        params: idParams,
        body: { contentType: 'application/json', schema: refundSchema },
        responses: {
          201: jsonResponse('Recorded: the refund, and the request as it is now (payment_request)', {
            ...REFUND_SCHEMA,
            properties: { ...REFUND_SCHEMA.properties, payment_request: PAYMENT_REQUEST_SCHEMA },
          }),
          200: jsonResponse('The same refund again', REFUND_SCHEMA),
          ...bodyErrorResponses(
            'invalid_content_type, required (transaction_hash) or invalid_parameter naming the field (id, transaction_hash, amount, chain)',
          ),
          ...apiKeyResponses,
          403: errorResponse(
            'refund_not_from_receiving_address (attribute transaction_hash): the transfer to the payer does not come from one of your receiving addresses',
          ),
          404: errorResponse('not_found: no payment request with this id for this app'),
          409: errorResponse(
            'payment_request_not_refundable (attribute id: nothing was received, or it is refunded already), refund_not_final ' +
              '(attribute transaction_hash, Retry-After: not in a final block yet), transaction_already_claimed (attribute transaction_hash)',
          ),
          422: errorResponse(
            'refund_transaction_not_found, refund_reverted, refund_wrong_token, refund_wrong_recipient (attribute transaction_hash); ' +
              'refund_wrong_amount, refund_exceeds_amount_paid (attribute amount); refund_wrong_chain (attribute chain)',
          ),
          503: errorResponse(
            'chain_unavailable: no RPC is configured for the chain; service_unavailable: the RPCs did not answer (Retry-After)',
          ),
        },
      },
      GET: {
        summary: 'The refunds recorded for a payment request, oldest first, paged',
        tags,
        security: [{ apiKey: [] }],
        params: idParams,
        query: listSchema,
        responses: {
          200: jsonResponse('A page', listPageSchema(REFUND_SCHEMA)),
          400: errorResponse('invalid_parameter naming the parameter (id, cursor, limit)'),
          ...apiKeyResponses,
          404: errorResponse('not_found: no payment request with this id for this app'),
        },
      },
    },
  );
}
