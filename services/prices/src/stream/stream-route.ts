import type { Router } from 'express';
import { endpoint, errorResponse } from '@attest/common';
import { RATE_LIMIT_FIELDS, TOO_MANY, type AddressLimit } from '../kernel/address-limit';
import { EXPOSED, parsePricesQuery, pricesQuerySchema, type PriceService } from '../prices';
import type { PriceStream } from './price-stream';

export interface StreamRouteDeps {
  nativeToken: string;
  /** Requests per address (in process memory); opening a stream counts against it. */
  limit: Pick<AddressLimit, 'middleware'>;
  prices: Pick<PriceService, 'parseCodes'>;
  stream: Pick<PriceStream, 'subscribe'>;
}

/** GET /public/v1/prices/stream: the price answer as Server-Sent Events (see PriceStream). */
export function streamRoute(router: Router, deps: StreamRouteDeps) {
  const native = deps.nativeToken.toUpperCase();
  const querySchema = pricesQuerySchema(native);
  const limited = deps.limit.middleware();
  endpoint(
    router,
    '/public/v1/prices/stream',
    {
      GET: [
        (_req, res, next) => {
          res.set({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED });
          next();
        },
        limited,
        async (req, res) => {
          const query = await parsePricesQuery(req, querySchema, native, deps.prices);
          await deps.stream.subscribe(req, res, query);
        },
      ],
    },
    {
      GET: {
        summary:
          'Live prices as Server-Sent Events (an event when the answer changes, a heartbeat, Last-Event-ID resume)',
        description:
          'The same parameters and answer as /public/v1/prices/latest/{native}, as events: `event: price` with ' +
          'the answer as data and `<version>.<ETag>` as id (the version orders the stored writes alike on every ' +
          'replica), sent at once and whenever it changes (on any replica); `event: unavailable` with the error ' +
          'body when a price is no longer fresh; a `: heartbeat` comment every 15 s. Reconnecting with ' +
          'Last-Event-ID first sends the answers written since that id, in order (writes of the last 5 minutes, ' +
          'at most 1,000; an older id gets the current answer), then the current answer unless it is the ' +
          'last one the client has, then live ones. Open streams ' +
          'are bounded per address (PRICE_STREAM_MAX_PER_ADDRESS) and per replica (PRICE_STREAM_MAX_CONNECTIONS).',
        tags: ['prices'],
        query: querySchema,
        responses: {
          200: {
            description: 'text/event-stream: event (price | unavailable), id, data',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
            headers: RATE_LIMIT_FIELDS,
          },
          400: errorResponse('required (fiatCurrencies) or invalid_parameter (an unknown code, named)'),
          429: TOO_MANY,
          503: errorResponse('service_unavailable: PRICE_STREAM_MAX_CONNECTIONS streams are open on this replica'),
        },
      },
    },
  );
}
