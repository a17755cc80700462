import { pageError } from '../kernel/openapi-document';
import { PORTAL_ADDRESS_FORMS } from './portal-addresses-forms';
import { again, notFound, page, portalForm, transactionsDown } from './portal-openapi';

/** /portal/apps/{id}/addresses…: an app's receiving addresses (in the transactions service). */
export const portalAddressDocs = {
  addresses: page('An app’s receiving addresses: chain, address, how each was added', {
    404: notFound,
    503: transactionsDown,
  }),
  challenge: portalForm('Ask for the message to sign with an address (owner)', PORTAL_ADDRESS_FORMS.challenge, {
    ...again('The addresses page with the message to sign and the form for its signature'),
    400: pageError('invalid_parameter: chain or address'),
    409: pageError('receiving_address_taken: another app receives at this address'),
    503: transactionsDown,
  }),
  prove: portalForm('Add the address with its signature of the message (owner)', PORTAL_ADDRESS_FORMS.prove, {
    ...again('The addresses page, with the address added'),
    400: pageError('invalid_challenge, challenge_expired or invalid_signature'),
    409: pageError('receiving_address_taken'),
    503: transactionsDown,
  }),
  remove: portalForm('Remove a receiving address of the app (owner)', PORTAL_ADDRESS_FORMS.remove, {
    ...again('The addresses page, without the address'),
    503: transactionsDown,
  }),
};
