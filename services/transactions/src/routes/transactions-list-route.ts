import type { Request, Response, Router } from 'express';
import { endpoint, errorResponse, jsonResponse } from '@attest/common';
import { toSpec } from '../domain/transactions';
import type { TransactionStore } from '../store/transaction-store';
import { apiKeyAuthentication, verifiedKey, type ApiKeyAuthDeps } from './api-key-auth';
import { apiKeyResponses } from './openapi-document';
import { encodeCursor, listQuery, listQuerySchema } from './payment-requests-route';

export interface TransactionsListRouteDeps extends ApiKeyAuthDeps {
  store: TransactionStore;
}

const STATUSES = ['pending', 'mined', 'failed'] as const;

/**
 * GET /api/v2/client/transactions?reference=&status=&since=&cursor=&limit=: the app's recorded payments
 * and transactions, oldest first, paged (the SPEC 2.5 lookup of one stays as it is).
 */
export function transactionsListRoute(router: Router, deps: TransactionsListRouteDeps): void {
  const list = async (req: Request, res: Response) => {
    const q = listQuery(req, STATUSES);
    const rows = await deps.store.listPage({ appId: verifiedKey(res).appId, ...q, limit: q.limit + 1 });
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    res.set('Cache-Control', 'no-store').json({
      data: page.map((t) => ({
        transaction_id: t.id,
        type: t.type,
        ...toSpec(t),
        status_reason: t.statusReason,
        payment_request_id: t.paymentRequestId,
      })),
      next_cursor: rows.length > q.limit && last ? encodeCursor(last.id) : null,
    });
  };
  endpoint(
    router,
    '/api/v2/client/transactions',
    { GET: [...apiKeyAuthentication(deps), list] },
    {
      GET: {
        summary: 'Your app’s recorded payments and transactions, oldest first, paged',
        tags: ['transactions'],
        security: [{ apiKey: [] }],
        query: listQuerySchema(STATUSES),
        responses: {
          200: jsonResponse('A page', {
            type: 'object',
            required: ['data', 'next_cursor'],
            properties: {
              data: {
                type: 'array',
                items: {
                  allOf: [
                    {
                      type: 'object',
                      required: ['transaction_id', 'type', 'status_reason', 'payment_request_id'],
                      properties: {
                        transaction_id: { type: 'string', pattern: '^0x[0-9a-f]{64}$' },
                        type: { enum: ['pay', 'sendTransaction'] },
                        status_reason: { type: ['string', 'null'] },
                        payment_request_id: { type: ['string', 'null'] },
                      },
                    },
                    { $ref: '#/components/schemas/Transaction' },
                  ],
                },
              },
              next_cursor: {
                type: ['string', 'null'],
                description: 'Pass as cursor for the next page; null on the last',
              },
            },
          }),
          400: errorResponse('invalid_parameter naming the parameter (status, since, cursor, limit)'),
          ...apiKeyResponses,
        },
      },
    },
  );
}
