import type { ApiInfo } from '@attest/common';

/** The price API's document (SPEC §4.8): info; the operations come from the routes. */
export function pricesApi(pricesUrl: string): ApiInfo {
  return {
    title: 'Attest prices',
    version: '1',
    description: 'Latest token prices in fiat currencies, with no credentials, and a price widget.',
    serverUrl: pricesUrl,
  };
}

/** The prices admin API's document (the admin port): info; the operations come from the admin routes. */
export function pricesAdminApi(): ApiInfo {
  return {
    title: 'Attest prices admin API',
    version: '1',
    description:
      'Prices and FX rates set by hand, their history, the feeds and how fresh their values are, the audit ' +
      'trail and admin tokens. Every /admin operation needs an admin token (Authorization: Bearer).',
    serverUrl: '/',
  };
}
