import type { Queryable } from '@attest/common';
import type { WebhookEvent } from '../kernel/events';
import { deliveryStore } from './delivery-store';
import { endpointStore } from './endpoint-store';
import { eventStore } from './event-store';

/** The webhooks' store: endpoints, the event outbox and events list, deliveries and their log. */
export function webhookStore(db: Queryable) {
  return { ...endpointStore(db), ...eventStore(db), ...deliveryStore(db) };
}
export type WebhookStore = ReturnType<typeof webhookStore>;

/** The outbox write the transactions and payment requests are given: the event, in the change's own transaction. */
export const writeEvent = (tx: Queryable, ...events: WebhookEvent[]): Promise<void> =>
  events.length === 1 ? eventStore(tx).addEvent(events[0]) : eventStore(tx).addEvents(events);
