/** The answer of GET /public/v1/prices/latest/{native} and /public/v1/miniapps/prices (SPEC 2.6). */
const PRICE = {
  type: 'object',
  required: ['asset', 'amount', 'decimals', 'symbol'],
  properties: {
    asset: { type: 'string' },
    amount: { type: 'string', pattern: '^\\d+$' },
    decimals: { type: 'integer', minimum: 0 },
    symbol: { type: 'string' },
  },
};
const OBSERVED_AT = {
  type: 'object',
  description:
    'observed_at.<TOKEN>.<FIAT>: when the price was observed by its sources (their own time, e.g. ' +
    'CoinGecko last_updated_at; the fetch time only for a source that gives none); a cross rate has the older of its two',
  additionalProperties: { type: 'object', additionalProperties: { type: 'string', format: 'date-time' } },
};
export const PRICES_ANSWER = {
  type: 'object',
  required: ['result'],
  properties: {
    result: {
      type: 'object',
      required: ['prices', 'observed_at'],
      properties: {
        prices: {
          type: 'object',
          description: 'prices.<TOKEN>.<FIAT>; price = amount × 10^-decimals',
          additionalProperties: { type: 'object', additionalProperties: PRICE },
        },
        observed_at: OBSERVED_AT,
        change: {
          type: 'object',
          description:
            'Only with change=true: change.<TOKEN>.<FIAT>.<1h|24h|7d> in percent; a window is left out when history does not cover it',
          additionalProperties: {
            type: 'object',
            additionalProperties: {
              type: 'object',
              additionalProperties: false,
              properties: Object.fromEntries(
                ['1h', '24h', '7d'].map((w) => [w, { type: 'string', pattern: '^-?\\d+\\.\\d{2}$' }]),
              ),
            },
          },
        },
      },
    },
  },
};
