import {
  ENDPOINT_EVENT_TYPES,
  EVENT_TYPE_FAMILIES,
  PAYMENT_REQUEST_EVENT_TYPES,
  PAYMENT_REQUEST_STATUSES,
  SUBSCRIBABLE_EVENT_TYPES,
  TRANSACTION_EVENT_TYPES,
} from '../src';

/** The one list of event types both services use (issue 40, item 13): the portal's checkboxes are these. */
describe('event types', () => {
  it('names an event per payment-request status, and every type an endpoint may subscribe to, once', () => {
    expect(PAYMENT_REQUEST_EVENT_TYPES).toEqual([
      'payment_request.created',
      ...PAYMENT_REQUEST_STATUSES.map((s) => `payment_request.${s}`),
    ]);
    expect(SUBSCRIBABLE_EVENT_TYPES).toEqual([
      ...TRANSACTION_EVENT_TYPES,
      ...PAYMENT_REQUEST_EVENT_TYPES,
      ...ENDPOINT_EVENT_TYPES,
    ]);
    expect(new Set(SUBSCRIBABLE_EVENT_TYPES).size).toBe(SUBSCRIBABLE_EVENT_TYPES.length);
    expect(EVENT_TYPE_FAMILIES).toEqual(['transaction', 'payment_request', 'webhook_endpoint']);
  });
});
