import { pageError } from '../kernel/openapi-document';
import { PORTAL_POLICY_FORMS } from './portal-policy-forms';
import { again, notFound, page, portalForm, transactionsDown } from './portal-openapi';

/** /portal/apps/{id}/payment-policy: an app's payment policy (in the transactions service). */
export const portalPolicyDocs = {
  policy: page(
    'An app’s payment policy: underpayment tolerance, overpayment handling, default expiry, payment page name, return origins',
    { 404: notFound, 503: transactionsDown },
  ),
  set: portalForm(
    'Set the app’s payment policy for the requests it creates from now on (owner)',
    PORTAL_POLICY_FORMS.set,
    {
      ...again('The policy page, with the policy set'),
      400: pageError(
        'invalid_parameter naming the field: underpayment_tolerance_percent (0 to 50), flag_overpayment, default_expires_in (60 to 86400), display_name, return_origins (https origins)',
      ),
      503: transactionsDown,
    },
  ),
};
