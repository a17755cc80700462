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
