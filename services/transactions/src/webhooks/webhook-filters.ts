import { EVENT_TYPE_FAMILIES, SUBSCRIBABLE_EVENT_TYPES, errors } from '@attest/common';

/** The test event `POST /api/v2/client/webhooks/{id}/test` sends to that one endpoint; marked `"test": true`. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** Operational events (webhook_endpoint.failing, .disabled): the list lives in @attest/common. */
export { ENDPOINT_EVENT_TYPES, type EndpointEventType } from '@attest/common';

/** Every type an endpoint's `enabled_events` (and the events list's `type`) may name (@attest/common's list). */
export const eventTypes = (): string[] => [...SUBSCRIBABLE_EVENT_TYPES];

/** The families a wildcard may name: `transaction.*` for every type that starts with `transaction.`. */
const families = () => EVENT_TYPE_FAMILIES;

export const MAX_EVENT_FILTERS = 50;

/**
 * Checks a list of event types (each a known type or a `family.*` wildcard), naming `field` when one is
 * not; returns it without duplicates, or null when it is empty (every type).
 */
export function eventFilter(patterns: string[], field: string): string[] | null {
  if (patterns.length > MAX_EVENT_FILTERS)
    throw errors.invalidParameter(field, `${field} may name at most ${MAX_EVENT_FILTERS} event types.`);
  const known = eventTypes();
  for (const p of patterns) {
    const wildcard = p.endsWith('.*') && families().includes(p.slice(0, -2));
    if (!wildcard && !known.includes(p))
      throw errors.invalidParameter(
        field,
        `${field} has an unknown event type ${JSON.stringify(p).slice(0, 80)}; use one of ${known.join(', ')}, or a family such as transaction.*.`,
      );
  }
  return patterns.length === 0 ? null : [...new Set(patterns)];
}

/** Whether an event type passes a filter (null: every type); the SQL twin is typeMatchesSql. */
export const matchesFilter = (type: string, filter: string[] | null): boolean =>
  filter === null || filter.some((p) => p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));

/** SQL: the event type `type` passes the filter `filter` (a text[]; NULL passes every type). */
export const typeMatchesSql = (type: string, filter: string) =>
  `(${filter} IS NULL OR EXISTS (SELECT 1 FROM unnest(${filter}) p WHERE p = ${type} OR (p LIKE '%.*' AND starts_with(${type}, left(p, -1)))))`;

/** An endpoint is reported failing (webhook_endpoint.failing) after this many failed attempts in a row, or when a delivery to it gives up. */
export const FAILING_AFTER_FAILURES = 5;
