import { portalAppDocs } from './portal-apps-route.openapi';
import { portalKeyDocs } from './portal-keys-route.openapi';
import { portalPaymentDocs } from './portal-payments-route.openapi';
import { portalSignInDocs } from './portal-route.openapi';
import { portalWebhookDocs } from './portal-webhooks-route.openapi';

/**
 * The developer portal's pages (issue 27), in the public document as the sign-in pages are: each route
 * registers its fragment (*.openapi.ts beside it) when it mounts; this is all of them in one object.
 */
export const portalDocs = {
  ...portalSignInDocs,
  ...portalAppDocs,
  ...portalKeyDocs,
  ...portalWebhookDocs,
  ...portalPaymentDocs,
};
