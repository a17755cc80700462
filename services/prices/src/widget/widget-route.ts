import { createHash } from 'node:crypto';
import type { Router } from 'express';
import { emptyResponse, endpoint, textResponse } from '@attest/common';
import { WIDGET_SOURCE } from './widget-source';

const BODY = Buffer.from(WIDGET_SOURCE, 'utf8');
const ETAG = `"${createHash('sha256').update(BODY).digest('base64url').slice(0, 27)}"`;

/**
 * GET /widget.js: the <attest-price> web component, for any page on any origin. Cached for an hour and
 * revalidated by ETag; CORS and Cross-Origin-Resource-Policy allow other origins to load it.
 */
export function widgetRoute(router: Router): void {
  endpoint(
    router,
    '/widget.js',
    {
      GET: [
        (req, res) => {
          res.set({
            'Content-Type': 'text/javascript; charset=utf-8',
            'Cache-Control': 'public, max-age=3600',
            ETag: ETAG,
            'Access-Control-Allow-Origin': '*',
            'Cross-Origin-Resource-Policy': 'cross-origin',
            'X-Content-Type-Options': 'nosniff',
          });
          if (
            req
              .get('if-none-match')
              ?.split(',')
              .some((t) => t.trim().replace(/^W\//, '') === ETAG)
          )
            return void res.status(304).end();
          res.send(BODY);
        },
      ],
    },
    {
      GET: {
        summary: 'The <attest-price> web component, for any page on any origin',
        tags: ['widget'],
        responses: {
          200: textResponse('The script (cached for an hour, revalidated by ETag)', 'text/javascript'),
          304: emptyResponse('Not modified (If-None-Match)'),
        },
      },
    },
  );
}
