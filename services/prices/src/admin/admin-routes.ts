import type { Router } from 'express';
import Joi from 'joi';
import { errors, validate } from '@attest/common';
import { parseDecimal } from '../domain/decimal';
import type { PriceService } from '../domain/prices';
import type { FeedRunner } from '../feeds/feed-runner';
import type { PriceStore } from '../store/price-store';

const DECIMAL = Joi.string().pattern(/^\d{1,40}(\.\d{1,36})?$/).messages({ 'string.pattern.base': '{{#label}} must be a decimal number such as 1.510763' });

const priceSchema = Joi.object({ token: Joi.string().uppercase().required(), fiat: Joi.string().uppercase().required(), amount: DECIMAL.required() });
const fxSchema = Joi.object({ fiat: Joi.string().uppercase().required(), rate: DECIMAL.required() });

/** Admin API: set a price or an FX rate by hand (visible to the next request), history, run the feeds now. */
export function pricesAdminRoutes(router: Router, deps: { prices: PriceService; store: PriceStore; runner: FeedRunner }): void {
  const known = async (token: string | null, fiat: string) => {
    const codes = await deps.prices.codes();
    if (token !== null && !codes.tokens.has(token)) throw errors.invalidParameter('token', `Unknown token code: ${token}.`);
    if (!codes.fiats.has(fiat)) throw errors.invalidParameter('fiat', `Unknown fiat currency code: ${fiat}.`);
  };

  router.post('/prices', async (req, res) => {
    const body = validate(priceSchema, req.body);
    await known(body.token, body.fiat);
    const fixed = parseDecimal(body.amount)!;
    await deps.prices.recordQuote(body.token, body.fiat, { amount: fixed.amount.toString(), decimals: fixed.decimals, source: 'manual', observedAt: new Date() });
    res.status(201).json({ token: body.token, fiat: body.fiat, amount: fixed.amount.toString(), decimals: fixed.decimals });
  });

  router.post('/fx', async (req, res) => {
    const body = validate(fxSchema, req.body);
    await known(null, body.fiat);
    const fixed = parseDecimal(body.rate)!;
    if (fixed.amount === 0n) throw errors.invalidParameter('rate', 'rate must be greater than zero.');
    await deps.prices.recordFx(body.fiat, { amount: fixed.amount.toString(), decimals: fixed.decimals, source: 'manual', observedAt: new Date() });
    res.status(201).json({ base: 'USD', fiat: body.fiat, amount: fixed.amount.toString(), decimals: fixed.decimals });
  });

  router.get('/prices/:token/:fiat/history', async (req, res) => {
    const token = req.params.token.toUpperCase();
    const fiat = req.params.fiat.toUpperCase();
    await known(token, fiat);
    const rows = await deps.store.history(token, fiat, 100);
    res.json(rows.map((r) => ({ amount: r.amount, decimals: r.decimals, source: r.source, observed_at: r.observedAt.toISOString() })));
  });

  router.post('/feeds/run', async (_req, res) => void res.json(await deps.runner.runOnce(true)));
}
