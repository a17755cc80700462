import { PORTAL_FORMS } from './portal-forms';
import { pageError } from '../kernel/openapi-document';
import { again, notFound, page, portalForm, refused } from './portal-openapi';

/** /portal/apps/{id}/keys…: an app's API keys (in the transactions service). */
export const portalKeyDocs = {
  keys: page('An app’s API keys: name, created, last used', {
    404: notFound,
    503: pageError('transactions_unavailable: the transactions service cannot be reached'),
  }),
  createKey: portalForm('Create an API key (developer or owner): shown once', PORTAL_FORMS.createKey, {
    ...again('The keys page with the new key, shown once'),
    503: pageError('transactions_unavailable'),
  }),
  revokeKey: portalForm('Revoke an API key of the app (developer or owner)', PORTAL_FORMS.revokeKey, {
    ...refused,
    503: pageError('transactions_unavailable'),
  }),
};
