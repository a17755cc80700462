import { ConfigError } from '@attest/common';
import { loadPricesConfig } from '../src/config';

const DATABASE_URL = 'postgres://attest:secret@db:5432/attest';
const problemsOf = (env: NodeJS.ProcessEnv) => {
  try {
    loadPricesConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

describe('prices configuration', () => {
  it('refuses the seed (demo) feed with a real database, naming the way out', () => {
    expect(problemsOf({ DATABASE_URL })).toEqual([
      'PRICE_FEEDS includes seed (fixed demo prices) while DATABASE_URL is set: use PRICE_FEEDS=http,fx for real prices, ' +
        'or set PRICE_FEEDS_ALLOW_SEED=true to serve demo prices from this database',
    ]);
    expect(
      problemsOf({ DATABASE_URL, PRICE_FEEDS: 'http,seed', PRICE_HTTP_URL: 'https://prices.example' }),
    ).toHaveLength(1);
  });

  it('accepts the seed feed when allowed, or on embedded storage (no DATABASE_URL)', () => {
    expect(loadPricesConfig({ DATABASE_URL, PRICE_FEEDS_ALLOW_SEED: 'true' })).toMatchObject({
      PRICE_FEEDS: 'seed',
      PRICE_FEEDS_ALLOW_SEED: true,
    });
    expect(loadPricesConfig({})).toMatchObject({ PRICE_FEEDS: 'seed', PRICE_FEEDS_ALLOW_SEED: false });
    expect(
      problemsOf({
        DATABASE_URL,
        PRICE_FEEDS: 'http,fx',
        PRICE_HTTP_URL: 'https://a.example',
        FX_HTTP_URL: 'https://b.example',
      }),
    ).toEqual([]);
  });

  it('takes the API key header as a pair of a header name and a printable value', () => {
    expect(problemsOf({ PRICE_HTTP_HEADER_NAME: 'x-cg-demo-api-key' })).toEqual([
      'PRICE_HTTP_HEADER_NAME and PRICE_HTTP_HEADER_VALUE must be set together',
    ]);
    expect(problemsOf({ PRICE_HTTP_HEADER_VALUE: 'key' })).toEqual([
      'PRICE_HTTP_HEADER_NAME and PRICE_HTTP_HEADER_VALUE must be set together',
    ]);
    expect(problemsOf({ PRICE_HTTP_HEADER_NAME: 'x cg', PRICE_HTTP_HEADER_VALUE: 'key' })).toEqual([
      'PRICE_HTTP_HEADER_NAME must be an HTTP header name',
    ]);
    expect(problemsOf({ PRICE_HTTP_HEADER_NAME: 'x-cg-demo-api-key', PRICE_HTTP_HEADER_VALUE: 'a\nb' })).toEqual([
      'PRICE_HTTP_HEADER_VALUE must be printable ASCII',
    ]);
  });
});
