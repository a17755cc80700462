import type { Router } from 'express';
import Joi from 'joi';
import {
  emptyResponse,
  endpoint,
  errorResponse,
  jsonResponse,
  queryParam,
  sendJsonBody,
  validate,
} from '@attest/common';
import { RATE_LIMIT_FIELDS, TOO_MANY, type AddressLimit } from '../kernel/address-limit';
import { HISTORY_RANGES, type HistoryRange, type PriceHistory } from './history';
import { CACHE_HEADERS, etagMatches, PREFLIGHT, priceCors } from './price-http';
import type { PriceService } from './price-service';

export interface PriceHistoryDeps {
  /** Requests per address (in process memory); every public price endpoint counts against it. */
  limit: Pick<AddressLimit, 'middleware'>;
  history: Pick<PriceHistory, 'history'>;
  prices: Pick<PriceService, 'resolveToken' | 'parseCodes'>;
}

const HISTORY_ANSWER = {
  type: 'object',
  required: ['result'],
  properties: {
    result: {
      type: 'object',
      required: ['token', 'fiat', 'range', 'interval_seconds', 'points'],
      additionalProperties: false,
      properties: {
        token: { type: 'string' },
        fiat: { type: 'string' },
        range: { enum: Object.keys(HISTORY_RANGES) },
        interval_seconds: { type: 'integer', description: 'One point per interval that holds quotes' },
        points: {
          type: 'array',
          items: {
            type: 'object',
            required: ['t', 'amount', 'decimals'],
            additionalProperties: false,
            properties: {
              t: { type: 'string', format: 'date-time', description: 'Start of the interval' },
              amount: { type: 'string', pattern: '^\\d+$' },
              decimals: { type: 'integer', minimum: 0 },
            },
          },
        },
      },
    },
  },
};

const historyQuery = Joi.object({
  fiat: Joi.string()
    .required()
    .pattern(/^[A-Za-z]{3}$/)
    .description('One fiat code (ISO 4217)')
    .example('USD'),
  range: Joi.string()
    .valid(...Object.keys(HISTORY_RANGES))
    .default('24h')
    .description('24h (a point per 5 min), 7d (per hour) or 30d (per 4 hours)'),
});
const historyPath = Joi.object({
  token: Joi.string().required().description('A token code (WLD) or its CAIP-19 asset id').example('WLD'),
});
const historyCacheControl = 'public, max-age=60';

/** GET /public/v1/prices/history/{token}: a token's price history in one fiat (CORS open, ETag with 304s). */
export function priceHistoryRoute(router: Router, deps: PriceHistoryDeps): void {
  const { prices } = deps;
  endpoint(
    router,
    '/public/v1/prices/history/:token',
    {
      GET: [
        priceCors,
        deps.limit.middleware(),
        async (req, res) => {
          const query = validate(historyQuery, {
            fiat: queryParam(req.query, 'fiat'),
            range: queryParam(req.query, 'range'),
          });
          const token = await prices.resolveToken(String(req.params.token), 'token');
          const [fiat] = await prices.parseCodes(query.fiat, 'fiats', 'fiat');
          const { body, etag } = await deps.history.history(token, fiat, query.range as HistoryRange);
          res.setHeader('Cache-Control', historyCacheControl);
          res.setHeader('ETag', etag);
          if (etagMatches(req, etag)) return void res.status(304).end();
          sendJsonBody(res, body);
        },
      ],
      OPTIONS: [priceCors],
    },
    {
      GET: {
        summary: 'A token’s price history in one fiat, down-sampled to a stated interval (for a sparkline)',
        tags: ['prices'],
        params: historyPath,
        query: historyQuery,
        responses: {
          200: jsonResponse('The points, oldest first', HISTORY_ANSWER, {
            ETag: CACHE_HEADERS.ETag,
            'Cache-Control': { description: 'public, max-age=60', schema: { type: 'string' } },
            ...RATE_LIMIT_FIELDS,
          }),
          304: emptyResponse('Not modified since If-None-Match'),
          400: errorResponse('required (fiat) or invalid_parameter (an unknown token or fiat, a range not listed)'),
          429: TOO_MANY,
        },
      },
      OPTIONS: PREFLIGHT,
    },
  );
}
