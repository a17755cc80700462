import type { Router } from 'express';
import {
  adminRoute,
  adminValidationResponse,
  auditOperatorAction,
  errors,
  jsonResponse,
  validate,
  type AuditLog,
} from '@attest/common';
import { parseDecimal } from '../kernel/decimal';
import type { PriceService } from '../prices';
import { FIXED, fxSchema, knownCodes, manualObservation, priceSchema, unknownCode } from './manual-values';

export interface ManualPriceDeps {
  prices: Pick<PriceService, 'codes' | 'recordQuote' | 'recordFx'>;
  audit: Pick<AuditLog, 'record'>;
}

/** POST /admin/prices and POST /admin/fx: set a price or a USD → fiat rate by hand (visible to the next request). */
export function manualPriceRoutes(router: Router, deps: ManualPriceDeps): void {
  const known = knownCodes(deps.prices);
  adminRoute(
    router,
    'POST',
    '/prices',
    {
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
    },
    async (req, res) => {
      const body = validate(priceSchema, req.body);
      await known(body.token, body.fiat);
      const fixed = parseDecimal(body.amount)!;
      await deps.prices.recordQuote(body.token, body.fiat, manualObservation(fixed));
      await auditOperatorAction(deps.audit, req, res, {
        type: 'price.set',
        subject: `${body.token}/${body.fiat}`,
        detail: { amount: body.amount },
      });
      res
        .status(201)
        .json({ token: body.token, fiat: body.fiat, amount: fixed.amount.toString(), decimals: fixed.decimals });
    },
  );

  adminRoute(
    router,
    'POST',
    '/fx',
    {
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
    },
    async (req, res) => {
      const body = validate(fxSchema, req.body);
      await known(null, body.fiat);
      const fixed = parseDecimal(body.rate)!;
      if (fixed.amount === 0n) throw errors.invalidParameter('rate', 'rate must be greater than zero.');
      await deps.prices.recordFx(body.fiat, manualObservation(fixed));
      await auditOperatorAction(deps.audit, req, res, {
        type: 'fx_rate.set',
        subject: `USD/${body.fiat}`,
        detail: { rate: body.rate },
      });
      res.status(201).json({ base: 'USD', fiat: body.fiat, amount: fixed.amount.toString(), decimals: fixed.decimals });
    },
  );
}
