import type { Router } from 'express';
import Joi from 'joi';
import { adminRoute, adminValidationResponse, DATE_TIME, jsonResponse } from '@attest/common';
import type { PriceService, PriceStore } from '../prices';
import { FIXED, knownCodes, unknownCode } from './manual-values';

export interface PriceHistoryAdminDeps {
  prices: Pick<PriceService, 'codes'>;
  store: Pick<PriceStore, 'history'>;
}

/** GET /admin/prices/{token}/{fiat}/history: the last 100 values of a pair, newest first. */
export function priceHistoryAdminRoute(router: Router, deps: PriceHistoryAdminDeps): void {
  const known = knownCodes(deps.prices);
  adminRoute(
    router,
    'GET',
    '/prices/:token/:fiat/history',
    {
      summary: 'The last 100 values of a pair, newest first',
      tags: ['prices'],
      params: Joi.object({
        token: Joi.string().description('A token code, such as WLD (any case)'),
        fiat: Joi.string().description('A fiat currency code, such as USD (any case)'),
      }),
      responses: {
        200: jsonResponse('The values, from feeds and set by hand', {
          type: 'array',
          items: {
            type: 'object',
            required: ['amount', 'decimals', 'source', 'observed_at'],
            additionalProperties: false,
            properties: {
              ...FIXED,
              source: { type: 'string', description: 'The feed, or manual' },
              observed_at: DATE_TIME,
            },
          },
        }),
        400: adminValidationResponse(unknownCode),
      },
    },
    async (req, res) => {
      const token = req.params.token.toUpperCase();
      const fiat = req.params.fiat.toUpperCase();
      await known(token, fiat);
      const rows = await deps.store.history(token, fiat, 100);
      res.json(
        rows.map((r) => ({
          amount: r.amount,
          decimals: r.decimals,
          source: r.source,
          observed_at: r.observedAt.toISOString(),
        })),
      );
    },
  );
}
