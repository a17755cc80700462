import { ERROR_SCHEMA, errorResponse, type OpenApiDocument } from '@attest/common';

/** The price API (SPEC §4.8). */
export function pricesOpenApi(pricesUrl: string, nativeToken: string): OpenApiDocument {
  const operation = {
    summary: 'Latest prices of tokens in fiat currencies (no credentials; CORS open)',
    parameters: [
      { name: 'fiatCurrencies', in: 'query', required: true, schema: { type: 'string' }, example: 'USD,EUR' },
      {
        name: 'cryptoCurrencies',
        in: 'query',
        required: false,
        schema: { type: 'string' },
        example: `${nativeToken},USDCE`,
        description: `Defaults to ${nativeToken}`,
      },
    ],
    responses: {
      200: {
        description:
          'result.prices.<TOKEN>.<FIAT> = {asset, amount, decimals, symbol}; price = amount × 10^-decimals. ETag and Last-Modified; 304 on a match',
      },
      400: errorResponse('required (fiatCurrencies) or invalid_parameter (an unknown code, named)'),
      503: errorResponse('price_unavailable: no fresh price for a requested pair (stale prices are never served)'),
    },
  };
  return {
    openapi: '3.1.0',
    info: { title: 'Attest prices', version: '1' },
    servers: [{ url: pricesUrl }],
    paths: {
      [`/public/v1/prices/latest/${nativeToken.toLowerCase()}`]: { get: operation },
      '/public/v1/miniapps/prices': { get: operation },
    },
    components: { schemas: { Error: ERROR_SCHEMA } },
  };
}
