import type { Router } from 'express';
import Joi from 'joi';
import {
  adminValidationResponse,
  DATE_TIME,
  documentAdminRoute,
  errors,
  jsonResponse,
  NULLABLE_DATE_TIME,
  operatorActor,
  validate,
  type AuditLog,
  type JsonSchema,
} from '@attest/common';
import { parseDecimal } from '../domain/decimal';
import type { PriceService } from '../domain/prices';
import type { FeedRunner } from '../feeds/feed-runner';
import type { Observation, PriceStore } from '../store/price-store';

const DECIMAL = Joi.string()
  .pattern(/^\d{1,40}(\.\d{1,36})?$/)
  .messages({ 'string.pattern.base': '{{#label}} must be a decimal number such as 1.510763' });

export const priceSchema = Joi.object({
  token: Joi.string().uppercase().required(),
  fiat: Joi.string().uppercase().required(),
  amount: DECIMAL.required(),
});
export const fxSchema = Joi.object({ fiat: Joi.string().uppercase().required(), rate: DECIMAL.required() });

/** An amount as stored: an integer and its decimals (amount 1510763, decimals 6 is 1.510763). */
const FIXED: Record<string, JsonSchema> = {
  amount: { type: 'string', pattern: '^\\d+$', description: 'The value times 10^decimals' },
  decimals: { type: 'integer', minimum: 0 },
};

const FRESHNESS: JsonSchema = {
  type: 'object',
  required: ['values', 'stale', 'newest_observed_at', 'oldest_observed_at'],
  additionalProperties: false,
  properties: {
    values: { type: 'integer', minimum: 0, description: 'Pairs whose latest value this source set' },
    stale: { type: 'integer', minimum: 0, description: 'Of those, older than PRICE_MAX_AGE_SECONDS (not served)' },
    newest_observed_at: NULLABLE_DATE_TIME,
    oldest_observed_at: NULLABLE_DATE_TIME,
  },
};

const FEED_OUTCOMES: JsonSchema = {
  type: 'object',
  description: 'Per feed: ok, failed, or skipped (another replica is running it)',
  additionalProperties: { enum: ['ok', 'skipped', 'failed'] },
};

const unknownCode = 'invalid_parameter token or fiat: a code the service does not know';

export interface PricesAdminDeps {
  prices: PriceService;
  store: PriceStore;
  runner: FeedRunner;
  audit: AuditLog;
  /** PRICE_MAX_AGE_SECONDS: older values are not served. */
  maxAgeMs: number;
}

/** Per source (feed, or `manual`): how many pairs it last set, and how fresh they are. */
function freshness(latest: Observation[], maxAgeMs: number, now: number) {
  const bySource = new Map<string, Observation[]>();
  for (const o of latest) bySource.set(o.source, [...(bySource.get(o.source) ?? []), o]);
  return (source: string) => {
    const values = bySource.get(source) ?? [];
    const times = values.map((o) => o.observedAt.getTime());
    return {
      values: values.length,
      stale: times.filter((t) => now - t > maxAgeMs).length,
      newest_observed_at: times.length ? new Date(Math.max(...times)).toISOString() : null,
      oldest_observed_at: times.length ? new Date(Math.min(...times)).toISOString() : null,
    };
  };
}

/**
 * Admin API: set a price or an FX rate by hand (visible to the next request), history, the feeds and
 * how fresh their values are, run the feeds now.
 */
export function pricesAdminRoutes(router: Router, deps: PricesAdminDeps): void {
  const known = async (token: string | null, fiat: string) => {
    const codes = await deps.prices.codes();
    if (token !== null && !codes.tokens.has(token))
      throw errors.invalidParameter('token', `Unknown token code: ${token}.`);
    if (!codes.fiats.has(fiat)) throw errors.invalidParameter('fiat', `Unknown fiat currency code: ${fiat}.`);
  };

  documentAdminRoute(router, 'POST', '/prices', {
    summary: 'Set a price by hand',
    description: 'Served from the next request on, as the source manual, until a feed sets a newer one.',
    tags: ['prices'],
    body: { contentType: 'application/json', schema: priceSchema },
    responses: {
      201: jsonResponse('The price set', {
        type: 'object',
        required: ['token', 'fiat', 'amount', 'decimals'],
        additionalProperties: false,
        properties: { token: { type: 'string' }, fiat: { type: 'string' }, ...FIXED },
      }),
      400: adminValidationResponse(`token, fiat or amount; ${unknownCode}`),
    },
  });
  router.post('/prices', async (req, res) => {
    const body = validate(priceSchema, req.body);
    await known(body.token, body.fiat);
    const fixed = parseDecimal(body.amount)!;
    await deps.prices.recordQuote(body.token, body.fiat, {
      amount: fixed.amount.toString(),
      decimals: fixed.decimals,
      source: 'manual',
      observedAt: new Date(),
    });
    await deps.audit.record({
      type: 'price.set',
      actor: operatorActor(req, res),
      subject: `${body.token}/${body.fiat}`,
      detail: { amount: body.amount },
    });
    res
      .status(201)
      .json({ token: body.token, fiat: body.fiat, amount: fixed.amount.toString(), decimals: fixed.decimals });
  });

  documentAdminRoute(router, 'POST', '/fx', {
    summary: 'Set a USD → fiat exchange rate by hand',
    tags: ['prices'],
    body: { contentType: 'application/json', schema: fxSchema },
    responses: {
      201: jsonResponse('The rate set', {
        type: 'object',
        required: ['base', 'fiat', 'amount', 'decimals'],
        additionalProperties: false,
        properties: { base: { const: 'USD' }, fiat: { type: 'string' }, ...FIXED },
      }),
      400: adminValidationResponse('fiat or rate (greater than zero); invalid_parameter fiat: an unknown code'),
    },
  });
  router.post('/fx', async (req, res) => {
    const body = validate(fxSchema, req.body);
    await known(null, body.fiat);
    const fixed = parseDecimal(body.rate)!;
    if (fixed.amount === 0n) throw errors.invalidParameter('rate', 'rate must be greater than zero.');
    await deps.prices.recordFx(body.fiat, {
      amount: fixed.amount.toString(),
      decimals: fixed.decimals,
      source: 'manual',
      observedAt: new Date(),
    });
    await deps.audit.record({
      type: 'fx_rate.set',
      actor: operatorActor(req, res),
      subject: `USD/${body.fiat}`,
      detail: { rate: body.rate },
    });
    res.status(201).json({ base: 'USD', fiat: body.fiat, amount: fixed.amount.toString(), decimals: fixed.decimals });
  });

  documentAdminRoute(router, 'GET', '/prices/:token/:fiat/history', {
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
  });
  router.get('/prices/:token/:fiat/history', async (req, res) => {
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
  });

  documentAdminRoute(router, 'GET', '/feeds', {
    summary: 'The feeds and how fresh the values they set are',
    description:
      'Each configured feed and manual: its last run on this replica, and for the latest values it set ' +
      '(prices, fx_rates) how many there are, how many are too old to serve (by the source’s own time), ' +
      'the newest and oldest, and the pairs where it is left out for deviating from the median of the sources.',
    tags: ['feeds'],
    responses: {
      200: jsonResponse('The feeds', {
        type: 'object',
        required: ['max_age_seconds', 'quorum', 'max_deviation_percent', 'feeds'],
        additionalProperties: false,
        properties: {
          max_age_seconds: { type: 'number', description: 'PRICE_MAX_AGE_SECONDS' },
          quorum: { type: 'integer', minimum: 1, description: 'PRICE_SOURCE_QUORUM' },
          max_deviation_percent: { type: 'number', description: 'PRICE_MAX_DEVIATION_PERCENT' },
          feeds: {
            type: 'array',
            items: {
              type: 'object',
              required: ['name', 'last_run', 'prices', 'fx_rates', 'deviating'],
              additionalProperties: false,
              properties: {
                name: { type: 'string' },
                last_run: {
                  oneOf: [
                    { type: 'null' },
                    {
                      type: 'object',
                      required: ['at', 'outcome', 'error'],
                      additionalProperties: false,
                      properties: {
                        at: DATE_TIME,
                        outcome: { enum: ['ok', 'failed'] },
                        error: { type: ['string', 'null'] },
                      },
                    },
                  ],
                  description: 'On this replica; null before its first run (and for manual)',
                },
                prices: FRESHNESS,
                fx_rates: FRESHNESS,
                deviating: {
                  type: 'array',
                  items: { type: 'string' },
                  description:
                    'TOKEN/FIAT pairs where this source’s fresh price is left out: further than ' +
                    'PRICE_MAX_DEVIATION_PERCENT from the median of the sources',
                },
              },
            },
          },
        },
      }),
    },
  });
  router.get('/feeds', async (_req, res) => {
    const [quotes, fx, health] = await Promise.all([
      deps.store.latestQuotes(),
      deps.store.latestFxRates(),
      deps.prices.currentSourceHealth(),
    ]);
    const now = Date.now();
    const prices = freshness(quotes, deps.maxAgeMs, now);
    const rates = freshness(fx, deps.maxAgeMs, now);
    const feeds = [...deps.runner.runs(), { name: 'manual', lastRun: null }].map((f) => ({
      name: f.name,
      last_run: f.lastRun && { at: f.lastRun.at.toISOString(), outcome: f.lastRun.outcome, error: f.lastRun.error },
      prices: prices(f.name),
      fx_rates: rates(f.name),
      deviating: health.get(f.name)?.deviating ?? [],
    }));
    res.json({
      max_age_seconds: deps.maxAgeMs / 1000,
      quorum: deps.prices.rule.quorum,
      max_deviation_percent: deps.prices.rule.maxDeviationBps / 100,
      feeds,
    });
  });

  documentAdminRoute(router, 'POST', '/feeds/run', {
    summary: 'Run every feed now',
    tags: ['feeds'],
    responses: { 200: jsonResponse('Each feed’s outcome', FEED_OUTCOMES) },
  });
  router.post('/feeds/run', async (req, res) => {
    const outcome = await deps.runner.runOnce(true);
    await deps.audit.record({ type: 'feeds.run', actor: operatorActor(req, res), subject: null, detail: { outcome } });
    res.json(outcome);
  });
}
