import Joi from 'joi';
import { form, str } from '../kernel/form-schemas';

/**
 * The payment policy page's form (POST /portal/apps/{id}/payment-policy), with the session's CSRF token. The
 * fields are passed on as typed: the transactions service checks them and its refusal names the field.
 */
export const PORTAL_POLICY_FORMS = {
  set: form({
    csrf: str().required(),
    underpayment_tolerance_percent: str('Percent of amount_due, 0 to 50 (two decimals)').allow(''),
    flag_overpayment: Joi.string()
      .valid('true', 'false')
      .description('true: an overpaid request is paid_over; false: paid'),
    default_expires_in: str('Seconds, 60 to 86400').allow(''),
    display_name: str('The name the payment page shows (empty: none)').allow(''),
    return_origins: str('The https origins return_url may point to, one a line').allow(''),
  }),
};
