import type { Router } from 'express';
import Joi from 'joi';
import { errors, operatorActor, validate, type AuditLog } from '@attest/common';
import { parseDecimal } from '../domain/decimal';
import type { PriceService } from '../domain/prices';
import type { FeedRunner } from '../feeds/feed-runner';
import type { Observation, PriceStore } from '../store/price-store';

const DECIMAL = Joi.string()
  .pattern(/^\d{1,40}(\.\d{1,36})?$/)
  .messages({ 'string.pattern.base': '{{#label}} must be a decimal number such as 1.510763' });

const priceSchema = Joi.object({
  token: Joi.string().uppercase().required(),
  fiat: Joi.string().uppercase().required(),
  amount: DECIMAL.required(),
});
const fxSchema = Joi.object({ fiat: Joi.string().uppercase().required(), rate: DECIMAL.required() });

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

  router.get('/feeds', async (_req, res) => {
    const [quotes, fx] = await Promise.all([deps.store.latestQuotes(), deps.store.latestFxRates()]);
    const now = Date.now();
    const prices = freshness(quotes, deps.maxAgeMs, now);
    const rates = freshness(fx, deps.maxAgeMs, now);
    const feeds = [...deps.runner.runs(), { name: 'manual', lastRun: null }].map((f) => ({
      name: f.name,
      last_run: f.lastRun && { at: f.lastRun.at.toISOString(), outcome: f.lastRun.outcome, error: f.lastRun.error },
      prices: prices(f.name),
      fx_rates: rates(f.name),
    }));
    res.json({ max_age_seconds: deps.maxAgeMs / 1000, feeds });
  });

  router.post('/feeds/run', async (req, res) => {
    const outcome = await deps.runner.runOnce(true);
    await deps.audit.record({ type: 'feeds.run', actor: operatorActor(req, res), subject: null, detail: { outcome } });
    res.json(outcome);
  });
}
