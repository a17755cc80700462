import Joi from 'joi';
import { errors, type JsonSchema } from '@attest/common';
import type { Fixed } from '../kernel/decimal';
import type { Observation } from '../kernel/observation';
import type { PriceService } from '../prices';

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
export const FIXED: Record<string, JsonSchema> = {
  amount: { type: 'string', pattern: '^\\d+$', description: 'The value times 10^decimals' },
  decimals: { type: 'integer', minimum: 0 },
};

export const unknownCode = 'invalid_parameter token or fiat: a code the service does not know';

/** Checks a token (unless null) and a fiat against the known codes: 400 invalid_parameter naming the unknown one. */
export const knownCodes =
  (prices: Pick<PriceService, 'codes'>) =>
  async (token: string | null, fiat: string): Promise<void> => {
    const codes = await prices.codes();
    if (token !== null && !codes.tokens.has(token))
      throw errors.invalidParameter('token', `Unknown token code: ${token}.`);
    if (!codes.fiats.has(fiat)) throw errors.invalidParameter('fiat', `Unknown fiat currency code: ${fiat}.`);
  };

/** A value an operator sets by hand: observed now, its source `manual`. */
export const manualObservation = (fixed: Fixed): Observation => ({
  amount: fixed.amount.toString(),
  decimals: fixed.decimals,
  source: 'manual',
  observedAt: new Date(),
});
