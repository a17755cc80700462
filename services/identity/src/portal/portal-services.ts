import type { Queryable } from '@attest/common';
import type { IdentityConfig } from '../config';
import { insightStore } from '../kernel/member-store';
import { portalClientId } from './portal-client';
import type { PortalServices } from './portal-deps';
import { TransactionsAdmin } from './transactions-admin';

/** The portal's own pieces: its client id, its HTTP client, the transactions admin API, sign-in insight. */
export const portalServices = (
  config: IdentityConfig,
  db: Queryable,
  fetchFn: typeof fetch = fetch,
): PortalServices => ({
  clientId: portalClientId(config.secret),
  fetch: fetchFn,
  transactionsAdmin: new TransactionsAdmin(
    config.portal.transactionsAdminUrl,
    config.portal.transactionsAdminToken,
    fetchFn,
  ),
  insight: insightStore(db),
});
