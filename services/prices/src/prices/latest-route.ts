import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import {
  emptyResponse,
  endpoint,
  errorResponse,
  errors,
  jsonResponse,
  sendJsonBody,
  type OperationDoc,
  type ResponseDoc,
} from '@attest/common';
import { TOO_MANY, type AddressLimit } from '../kernel/address-limit';
import type { PriceHistory } from './history';
import { PRICES_ANSWER } from './latest-route.openapi';
import { CACHE_HEADERS, etagMatches, PREFLIGHT, priceCors } from './price-http';
import type { PriceService } from './price-service';
import { parsePricesQuery, pricesQuerySchema } from './prices-query';

export interface LatestPricesDeps {
  nativeToken: string;
  cacheMaxAgeSeconds: number;
  /** Requests per address (in process memory); every public price endpoint counts against it. */
  limit: Pick<AddressLimit, 'middleware'>;
  history: Pick<PriceHistory, 'changes'>;
  prices: Pick<PriceService, 'parseCodes' | 'parsedQuery' | 'answer' | 'answerWithChange'>;
}

/**
 * GET /public/v1/prices/latest/<native> and GET /public/v1/miniapps/prices (SPEC 4.8, 2.6):
 * open CORS for widgets, short max-age, ETag / Last-Modified with 304s.
 */
export function latestPricesRoute(router: Router, deps: LatestPricesDeps): void {
  const { prices } = deps;
  const native = deps.nativeToken.toUpperCase();
  const limited = deps.limit.middleware();
  const querySchema = pricesQuerySchema(native);
  const cacheControl = `public, max-age=${deps.cacheMaxAgeSeconds}`;
  const latest = async (req: Request, res: Response) => {
    // the same query string means the same query: parsed once per loaded snapshot of the codes
    const url = req.originalUrl;
    const mark = url.indexOf('?');
    const query = await prices.parsedQuery(mark === -1 ? '' : url.slice(mark + 1), () =>
      parsePricesQuery(req, querySchema, native, prices),
    );
    const { tokens, fiats } = query;
    const { body, etag, lastModified, lastModifiedMs, observedAt } = query.change
      ? await prices.answerWithChange(tokens, fiats, (list) => deps.history.changes(list))
      : await prices.answer(tokens, fiats);
    res.setHeader('Cache-Control', cacheControl);
    res.setHeader('X-Observed-At', observedAt);
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', lastModified);
    const ifNoneMatch = req.get('if-none-match');
    const ifModifiedSince = req.get('if-modified-since');
    const notModified = ifNoneMatch
      ? etagMatches(req, etag)
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
  const docs = (summary: string, params?: Joi.ObjectSchema) => ({ GET: get(summary, params), OPTIONS: PREFLIGHT });
  const latestPath = Joi.object({
    native: Joi.string().valid(native.toLowerCase()).required().description('The native token, lower case'),
  });
  endpoint(
    router,
    '/public/v1/prices/latest/:native',
    {
      GET: [
        priceCors,
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
      OPTIONS: [priceCors],
    },
    docs('Latest prices of tokens in fiat currencies (no credentials; CORS open)', latestPath),
    { fast: true },
  );
  endpoint(
    router,
    '/public/v1/miniapps/prices',
    { GET: [priceCors, limited, latest], OPTIONS: [priceCors] },
    docs('The same answer, at the path mini apps call'),
    { fast: true },
  );
}
