import { PORTAL_EVENTS_QUERY, PORTAL_PAYMENTS_QUERY } from './portal-forms';
import { pageError } from '../kernel/openapi-document';
import { notFound, page, transactionsDown } from './portal-openapi';

/** /portal/apps/{id}/payments… and /events: an app's payments and events, read only. */
export const portalPaymentDocs = {
  payments: page(
    'An app’s payment requests and transactions, searched by reference and status',
    { 400: pageError('invalid_parameter: status'), 404: notFound, 503: transactionsDown },
    PORTAL_PAYMENTS_QUERY,
  ),
  paymentRequest: page('A payment request: status, reason, amounts, its payments', {
    404: pageError('not_found: no such app or payment request of it'),
    503: transactionsDown,
  }),
  transaction: page('A transaction: status, reason, amount, its status history', {
    404: pageError('not_found: no such app or transaction of it'),
    503: transactionsDown,
  }),
  events: page(
    'An app’s events, oldest first, with their payloads; filtered by type',
    {
      400: pageError('invalid_parameter: type (an unknown event type) or after'),
      404: notFound,
      503: transactionsDown,
    },
    PORTAL_EVENTS_QUERY,
  ),
};
