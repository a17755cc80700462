import type { Request, Response, Router } from 'express';
import { endpoint, errors, queryParam, sendJsonBody } from '@attest/common';
import type { PriceService } from '../domain/prices';

export interface PricesRouteOptions {
  nativeToken: string;
  cacheMaxAgeSeconds: number;
}

/**
 * GET /public/v1/prices/latest/<native> and GET /public/v1/miniapps/prices (SPEC 4.8, 2.6):
 * open CORS for widgets, short max-age, ETag / Last-Modified with 304s.
 */
export function pricesRoute(router: Router, prices: PriceService, options: PricesRouteOptions): void {
  const native = options.nativeToken.toUpperCase();

  const cors = (req: Request, res: Response, next: () => void) => {
    res.set({
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': 'ETag, Last-Modified',
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

  const cacheControl = `public, max-age=${options.cacheMaxAgeSeconds}`;
  const latest = async (req: Request, res: Response) => {
    const fiatParam = queryParam(req.query, 'fiatCurrencies');
    if (!fiatParam) throw errors.required('fiatCurrencies');
    const fiats = await prices.parseCodes(fiatParam, 'fiats', 'fiatCurrencies');
    const cryptoParam = queryParam(req.query, 'cryptoCurrencies');
    const tokens = cryptoParam ? await prices.parseCodes(cryptoParam, 'tokens', 'cryptoCurrencies') : [native];
    const { body, etag, lastModified, lastModifiedMs } = await prices.answer(tokens, fiats);
    res.setHeader('Cache-Control', cacheControl);
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

  endpoint(router, '/public/v1/prices/latest/:native', {
    GET: [
      cors,
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
  });
  endpoint(router, '/public/v1/miniapps/prices', { GET: [cors, latest], OPTIONS: [cors] });
}
