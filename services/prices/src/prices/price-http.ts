import type { Request, Response } from 'express';
import { emptyResponse, type OperationDoc } from '@attest/common';
import { RATE_LIMIT_FIELDS } from '../kernel/address-limit';

/** Response headers a page on another origin may read. */
export const EXPOSED = 'ETag, Last-Modified, X-Observed-At, Retry-After, RateLimit, RateLimit-Policy';

/** The validators and caching of a price answer, as documented. */
export const CACHE_HEADERS = {
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

/** Open CORS for widgets on any origin; an OPTIONS preflight is answered here (GET only, for a day). */
export const priceCors = (req: Request, res: Response, next: () => void) => {
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

/** The OPTIONS operation of each public price path. */
export const PREFLIGHT: OperationDoc = {
  summary: 'CORS preflight: any origin may GET',
  tags: ['prices'],
  responses: { 204: emptyResponse('Access-Control-Allow-Methods: GET, for a day') },
};

/** Whether the request's If-None-Match names this ETag (weak or strong) or is `*`. */
export const etagMatches = (req: Request, etag: string): boolean =>
  req
    .get('if-none-match')
    ?.split(',')
    .some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*') ?? false;
