import type { ApiInfo } from '@attest/common';
import { apiKeyAdminComponents, appAdminComponents } from './api-keys';
import { receivingAddressComponents } from './receiving-addresses';
import { transactionAdminComponents, transactionPublicComponents } from './transactions';
import { deliveryAdminComponents, webhookAdminComponents, webhookPublicComponents } from './webhooks';

/**
 * The two OpenAPI documents' info and shared components, assembled from the features' fragments; the
 * operations come from the routes, each documented beside its handler.
 */

/** The public API's document. */
export function transactionsApi(apiUrl: string): ApiInfo {
  return {
    title: 'Attest transactions',
    version: '2',
    description:
      'Did this payment go through? Look up an app’s payment or transaction by id; manage your webhook endpoints and ' +
      'read your events (GET /api/v2/client/events), and state the addresses you receive payments at ' +
      '(/api/v2/client/receiving-addresses), with your API key.',
    serverUrl: apiUrl,
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'api_…' } },
      schemas: { ...transactionPublicComponents, ...webhookPublicComponents, ...receivingAddressComponents },
    },
  };
}

/** The transactions admin API's document. */
export function transactionsAdminApi(): ApiInfo {
  return {
    title: 'Attest transactions admin API',
    version: '1',
    description:
      'API keys, transactions recorded and moved by hand, webhook endpoints and their deliveries, apps’ receiving ' +
      'addresses, the audit trail and admin tokens. Every /admin operation needs an admin token (Authorization: Bearer).',
    serverUrl: '/',
    components: {
      schemas: {
        ...transactionAdminComponents,
        ...apiKeyAdminComponents,
        ...webhookAdminComponents,
        ...appAdminComponents,
        ...deliveryAdminComponents,
        ...receivingAddressComponents,
      },
    },
  };
}
