import type { Request } from 'express';
import Joi from 'joi';
import { queryParam, validate } from '@attest/common';
import type { PriceService } from './price-service';

/** The query of the price endpoints (each parameter once, blank as missing: queryParam runs first). */
export const pricesQuerySchema = (nativeToken: string) =>
  Joi.object({
    fiatCurrencies: Joi.string()
      .required()
      .description('Comma-separated fiat codes (ISO 4217), e.g. USD,EUR')
      .example('USD,EUR'),
    cryptoCurrencies: Joi.string()
      .description(`Comma-separated token codes; defaults to ${nativeToken}`)
      .example(`${nativeToken},USDCE`),
    change: Joi.boolean()
      .truthy('1')
      .falsy('0')
      .description(
        'true: add result.change.<TOKEN>.<FIAT> = {"1h","24h","7d"}: the change in percent over each window ' +
          'stored quotes cover (two decimals, e.g. "-1.25"); off by default so the SPEC 4.8 answer is unchanged',
      ),
  });

export interface PricesQuery {
  tokens: string[];
  fiats: string[];
  change: boolean;
}

/**
 * The query of a request, validated against `schema` (pricesQuerySchema) and its codes against the known
 * ones: the tokens asked (the native token when none is), the fiats, and whether the change is wanted.
 */
export async function parsePricesQuery(
  req: Request,
  schema: Joi.ObjectSchema,
  native: string,
  prices: Pick<PriceService, 'parseCodes'>,
): Promise<PricesQuery> {
  const query = validate(schema, {
    fiatCurrencies: queryParam(req.query, 'fiatCurrencies'),
    cryptoCurrencies: queryParam(req.query, 'cryptoCurrencies'),
    change: queryParam(req.query, 'change'),
  }) as { fiatCurrencies: string; cryptoCurrencies?: string; change?: boolean };
  const fiats = await prices.parseCodes(query.fiatCurrencies, 'fiats', 'fiatCurrencies');
  const cryptoParam = query.cryptoCurrencies;
  const tokens = cryptoParam ? await prices.parseCodes(cryptoParam, 'tokens', 'cryptoCurrencies') : [native];
  return { tokens, fiats, change: query.change === true };
}
