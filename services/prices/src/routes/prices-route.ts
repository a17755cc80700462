import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import {
  emptyResponse,
  endpoint,
  errorResponse,
  errors,
  jsonResponse,
  queryParam,
  sendJsonBody,
  validate,
  type OperationDoc,
  type ResponseDoc,
} from '@attest/common';
import { HISTORY_RANGES, type HistoryRange, type PriceHistory } from '../domain/history';
import type { PriceService } from '../domain/prices';
import type { AddressLimit } from './address-limit';

export interface PricesRouteOptions {
  nativeToken: string;
  cacheMaxAgeSeconds: number;
  /** Requests per address (in process memory); every public price endpoint counts against it. */
  limit: AddressLimit;
  history: PriceHistory;
}

/** The query of both price endpoints (each parameter once, blank as missing: queryParam runs first). */
export const pricesQuerySchema = (nativeToken: string) =>
  Joi.object({
    fiatCurrencies: Joi.string()
      .required()
      .description('Comma-separated fiat codes (ISO 4217), e.g. USD,EUR')
      .example('USD,EUR'),
    cryptoCurrencies: Joi.string()
      .description(`Comma-separated token codes; defaults to ${nativeToken}`)
      .example(`${nativeToken},USDCE`),
    change: Joi.boolean()
      .truthy('1')
      .falsy('0')
      .description(
        'true: add result.change.<TOKEN>.<FIAT> = {"1h","24h","7d"}: the change in percent over each window ' +
          'stored quotes cover (two decimals, e.g. "-1.25"); off by default so the SPEC 4.8 answer is unchanged',
      ),
  });

const PRICE = {
  type: 'object',
  required: ['asset', 'amount', 'decimals', 'symbol'],
  properties: {
    asset: { type: 'string' },
    amount: { type: 'string', pattern: '^\\d+$' },
    decimals: { type: 'integer', minimum: 0 },
    symbol: { type: 'string' },
  },
};
const OBSERVED_AT = {
  type: 'object',
  description:
    'observed_at.<TOKEN>.<FIAT>: when the price was observed by its sources (their own time, e.g. ' +
    'CoinGecko last_updated_at; the fetch time only for a source that gives none); a cross rate has the older of its two',
  additionalProperties: { type: 'object', additionalProperties: { type: 'string', format: 'date-time' } },
};
const PRICES_ANSWER = {
  type: 'object',
  required: ['result'],
  properties: {
    result: {
      type: 'object',
      required: ['prices', 'observed_at'],
      properties: {
        prices: {
          type: 'object',
          description: 'prices.<TOKEN>.<FIAT>; price = amount × 10^-decimals',
          additionalProperties: { type: 'object', additionalProperties: PRICE },
        },
        observed_at: OBSERVED_AT,
        change: {
          type: 'object',
          description:
            'Only with change=true: change.<TOKEN>.<FIAT>.<1h|24h|7d> in percent; a window is left out when history does not cover it',
          additionalProperties: {
            type: 'object',
            additionalProperties: {
              type: 'object',
              additionalProperties: false,
              properties: Object.fromEntries(
                ['1h', '24h', '7d'].map((w) => [w, { type: 'string', pattern: '^-?\\d+\\.\\d{2}$' }]),
              ),
            },
          },
        },
      },
    },
  },
};
/** The RateLimit fields (draft-ietf-httpapi-ratelimit-headers) on every counted answer. */
export const RATE_LIMIT_FIELDS = {
  'RateLimit-Policy': {
    description: '"per-address";q=<requests>;w=<seconds> (PRICE_RATE_LIMIT_PER_MINUTE per 60 s)',
    schema: { type: 'string' },
  },
  RateLimit: { description: '"per-address";r=<left>;t=<seconds until the window ends>', schema: { type: 'string' } },
};
export const TOO_MANY: ResponseDoc = {
  ...errorResponse('too_many_requests: over PRICE_RATE_LIMIT_PER_MINUTE from this address; wait Retry-After seconds'),
  headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } }, ...RATE_LIMIT_FIELDS },
};

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

/** Response headers a page on another origin may read. */
export const EXPOSED = 'ETag, Last-Modified, X-Observed-At, Retry-After, RateLimit, RateLimit-Policy';
const CACHE_HEADERS = {
  ETag: { description: 'Send it back in If-None-Match for a 304', schema: { type: 'string' } },
  'Last-Modified': {
    description: 'When the newest price of the answer was observed by its source (not when Attest fetched it)',
    schema: { type: 'string' },
  },
  'X-Observed-At': {
    description: 'ISO 8601: when the oldest price of the answer was observed by its source (the answer is as of then)',
    schema: { type: 'string', format: 'date-time' },
  },
  'Cache-Control': { description: 'public, max-age=PRICE_CACHE_MAX_AGE_SECONDS', schema: { type: 'string' } },
  ...RATE_LIMIT_FIELDS,
};

/**
 * GET /public/v1/prices/latest/<native> and GET /public/v1/miniapps/prices (SPEC 4.8, 2.6):
 * open CORS for widgets, short max-age, ETag / Last-Modified with 304s.
 */
export function pricesRoute(router: Router, prices: PriceService, options: PricesRouteOptions): void {
  const native = options.nativeToken.toUpperCase();

  const cors = (req: Request, res: Response, next: () => void) => {
    res.set({
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': EXPOSED,
      Vary: 'Accept-Encoding',
    });
    if (req.method === 'OPTIONS') {
      res
        .set({
          'Access-Control-Allow-Methods': 'GET',
          'Access-Control-Allow-Headers': 'If-None-Match, If-Modified-Since',
          'Access-Control-Max-Age': '86400',
        })
        .status(204)
        .end();
      return;
    }
    next();
  };

  const limited = options.limit.middleware();
  const querySchema = pricesQuerySchema(native);
  const cacheControl = `public, max-age=${options.cacheMaxAgeSeconds}`;
  const parseQuery = async (req: Request) => {
    const query = validate(querySchema, {
      fiatCurrencies: queryParam(req.query, 'fiatCurrencies'),
      cryptoCurrencies: queryParam(req.query, 'cryptoCurrencies'),
      change: queryParam(req.query, 'change'),
    });
    const fiats = await prices.parseCodes(query.fiatCurrencies, 'fiats', 'fiatCurrencies');
    const cryptoParam = query.cryptoCurrencies;
    const tokens = cryptoParam ? await prices.parseCodes(cryptoParam, 'tokens', 'cryptoCurrencies') : [native];
    return { tokens, fiats, change: query.change === true };
  };
  const latest = async (req: Request, res: Response) => {
    // the same query string means the same query: parsed once per loaded snapshot of the codes
    const url = req.originalUrl;
    const mark = url.indexOf('?');
    const query = await prices.parsedQuery(mark === -1 ? '' : url.slice(mark + 1), () => parseQuery(req));
    const { tokens, fiats } = query;
    const { body, etag, lastModified, lastModifiedMs, observedAt } = query.change
      ? await prices.answerWithChange(tokens, fiats, (list) => options.history.changes(list))
      : await prices.answer(tokens, fiats);
    res.setHeader('Cache-Control', cacheControl);
    res.setHeader('X-Observed-At', observedAt);
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', lastModified);
    const ifNoneMatch = req.get('if-none-match');
    const ifModifiedSince = req.get('if-modified-since');
    const notModified = ifNoneMatch
      ? ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*')
      : ifModifiedSince !== undefined &&
        !Number.isNaN(Date.parse(ifModifiedSince)) &&
        lastModifiedMs <= Date.parse(ifModifiedSince);
    if (notModified) return void res.status(304).end();
    sendJsonBody(res, body);
  };

  const notFound = (params?: Joi.ObjectSchema): Record<number, ResponseDoc> =>
    params ? { 404: errorResponse(`not_found: prices are at /public/v1/prices/latest/${native.toLowerCase()}`) } : {};
  const get = (summary: string, params?: Joi.ObjectSchema): OperationDoc => ({
    summary,
    tags: ['prices'],
    params,
    query: querySchema,
    responses: {
      200: jsonResponse('The latest prices', PRICES_ANSWER, CACHE_HEADERS),
      304: emptyResponse('Not modified since If-None-Match / If-Modified-Since', CACHE_HEADERS),
      400: errorResponse(
        'required (fiatCurrencies) or invalid_parameter (an unknown code, named; a parameter given twice)',
      ),
      ...notFound(params),
      429: TOO_MANY,
      503: errorResponse('price_unavailable: no fresh price for a requested pair (stale prices are never served)'),
    },
  });
  const preflight: OperationDoc = {
    summary: 'CORS preflight: any origin may GET',
    tags: ['prices'],
    responses: { 204: emptyResponse('Access-Control-Allow-Methods: GET, for a day') },
  };
  const docs = (summary: string, params?: Joi.ObjectSchema) => ({ GET: get(summary, params), OPTIONS: preflight });
  const latestPath = Joi.object({
    native: Joi.string().valid(native.toLowerCase()).required().description('The native token, lower case'),
  });
  endpoint(
    router,
    '/public/v1/prices/latest/:native',
    {
      GET: [
        cors,
        limited,
        (req, _res, next) =>
          next(
            req.params.native === native.toLowerCase()
              ? undefined
              : errors.notFound(
                  `Unknown token path; prices are served at /public/v1/prices/latest/${native.toLowerCase()}.`,
                ),
          ),
        latest,
      ],
      OPTIONS: [cors],
    },
    docs('Latest prices of tokens in fiat currencies (no credentials; CORS open)', latestPath),
    { fast: true },
  );
  endpoint(
    router,
    '/public/v1/miniapps/prices',
    { GET: [cors, limited, latest], OPTIONS: [cors] },
    docs('The same answer, at the path mini apps call'),
    { fast: true },
  );

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
  endpoint(
    router,
    '/public/v1/prices/history/:token',
    {
      GET: [
        cors,
        limited,
        async (req, res) => {
          const query = validate(historyQuery, {
            fiat: queryParam(req.query, 'fiat'),
            range: queryParam(req.query, 'range'),
          });
          const token = await prices.resolveToken(String(req.params.token), 'token');
          const [fiat] = await prices.parseCodes(query.fiat, 'fiats', 'fiat');
          const { body, etag } = await options.history.history(token, fiat, query.range as HistoryRange);
          res.setHeader('Cache-Control', historyCacheControl);
          res.setHeader('ETag', etag);
          const ifNoneMatch = req.get('if-none-match');
          if (ifNoneMatch?.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*'))
            return void res.status(304).end();
          sendJsonBody(res, body);
        },
      ],
      OPTIONS: [cors],
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
      OPTIONS: preflight,
    },
  );
}
