import type Joi from 'joi';
import { form, PASSKEY_FIELDS, str } from '../kernel/form-schemas';

/** GET /account. */
export const ACCOUNT_QUERY = form({
  notice: str('What the last form did'),
  approval: str('What the last approval form did: approved or denied (issue 42)'),
});

const accountForm = (fields: Record<string, Joi.Schema>) =>
  form({ csrf: str('The page’s CSRF token').required(), ...fields });

/** The account page's forms (POST /account/…). */
export const ACCOUNT_FORMS = {
  withdrawConsent: accountForm({ app_id: str().required() }),
  addPasskey: accountForm({ name: str(), ...PASSKEY_FIELDS }),
  removePasskey: accountForm({ passkey_id: str().required() }),
  changePassword: accountForm({
    current_password: str().required(),
    new_password: str('8 to 1024 characters').min(8).max(1024).required(),
    confirm_password: str().required(),
  }),
  endSession: accountForm({ session_id: str().required() }),
  endOtherSessions: accountForm({}),
};
