import Joi from 'joi';
import { form, str } from '../kernel/form-schemas';

/** The receiving-address pages' forms (POST /portal/apps/{id}/addresses…): each carries the session's CSRF token. */
const portalForm = (fields: Record<string, Joi.Schema>) => form({ csrf: str().required(), ...fields });

export const PORTAL_ADDRESS_FORMS = {
  challenge: portalForm({
    chain: str('A chain the transactions service is configured for, e.g. worldchain').required(),
    address: str('The address: 0x and 40 hexadecimal digits').required(),
  }),
  prove: portalForm({
    challenge_id: str('The challenge the page showed').required(),
    signature: str('The address’s signature of the message, 0x…').required(),
  }),
  remove: portalForm({ chain: str().required(), address: str().required() }),
};
