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
import type { PriceService } from '../domain/prices';
import type { AddressLimit } from './address-limit';

export interface PricesRouteOptions {
  nativeToken: string;
  cacheMaxAgeSeconds: number;
  /** Requests per address (in process memory); every public price endpoint counts against it. */
  limit: AddressLimit;
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
  const latest = async (req: Request, res: Response) => {
    const query = validate(querySchema, {
      fiatCurrencies: queryParam(req.query, 'fiatCurrencies'),
      cryptoCurrencies: queryParam(req.query, 'cryptoCurrencies'),
    });
    const fiats = await prices.parseCodes(query.fiatCurrencies, 'fiats', 'fiatCurrencies');
    const cryptoParam = query.cryptoCurrencies;
    const tokens = cryptoParam ? await prices.parseCodes(cryptoParam, 'tokens', 'cryptoCurrencies') : [native];
    const { body, etag, lastModified, lastModifiedMs, observedAt } = await prices.answer(tokens, fiats);
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
  );
  endpoint(
    router,
    '/public/v1/miniapps/prices',
    { GET: [cors, limited, latest], OPTIONS: [cors] },
    docs('The same answer, at the path mini apps call'),
  );
}
