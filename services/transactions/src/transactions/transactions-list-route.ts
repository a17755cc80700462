import type { Request, Response, Router } from 'express';
import { endpoint, errorResponse, jsonResponse, listPage } from '@attest/common';
import { apiKeyAuthentication, verifiedKey, type ApiKeyAuthDeps } from '../kernel/api-keys/api-key-auth';
import { encodeCursor, listPageSchema, listQuery, listQuerySchema } from '../kernel/list-query';
import { apiKeyResponses } from '../kernel/openapi';
import { toSpec } from './transaction-spec';
import type { TransactionStore } from './transaction-store';

export interface TransactionsListRouteDeps extends ApiKeyAuthDeps {
  store: Pick<TransactionStore, 'listPage'>;
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
    res.set('Cache-Control', 'no-store').json(
      listPage(
        'data',
        rows,
        q.limit,
        (t) => ({
          transaction_id: t.id,
          type: t.type,
          ...toSpec(t),
          status_reason: t.statusReason,
          payment_request_id: t.paymentRequestId,
        }),
        (t) => encodeCursor(t.id),
      ),
    );
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
          200: jsonResponse(
            'A page',
            listPageSchema({
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
            }),
          ),
          400: errorResponse('invalid_parameter naming the parameter (status, since, cursor, limit)'),
          ...apiKeyResponses,
        },
      },
    },
  );
}
