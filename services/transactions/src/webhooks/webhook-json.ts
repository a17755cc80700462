import type { DeliveryWithAttempts } from './webhook-service';
import type { StoredEvent, WebhookDelivery, WebhookEndpoint } from './webhook-types';

/** The JSON of webhook endpoints, deliveries and events, the same in the app API and the admin API. */

const iso = (d: Date | null) => d?.toISOString() ?? null;
const future = (d: Date | null, now: Date) => (d && d > now ? d.toISOString() : null);

/** disabled; failing (its last attempt failed, failing_since set); else enabled. */
export const endpointStatus = (e: WebhookEndpoint) =>
  e.disabledAt ? 'disabled' : e.failingSince ? 'failing' : 'enabled';

export function publicEndpoint(e: WebhookEndpoint) {
  const now = new Date();
  return {
    webhook_id: e.id,
    app_id: e.appId,
    url: e.url,
    description: e.description,
    enabled_events: e.enabledEvents ?? [],
    status: endpointStatus(e),
    created_at: e.createdAt.toISOString(),
    previous_secret_expires_at: future(e.previousSecretExpiresAt, now),
    failing_since: iso(e.failingSince),
    consecutive_failures: e.consecutiveFailures,
    throttled_until: future(e.throttledUntil, now),
    disabled_at: iso(e.disabledAt),
    disabled_reason: e.disabledReason,
  };
}

export const publicDelivery = (d: WebhookDelivery) => ({
  delivery_id: d.id,
  webhook_id: d.endpointId,
  event_id: d.eventId,
  event_type: d.eventType,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.status === 'pending' ? d.nextAttemptAt.toISOString() : null,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  created_at: d.createdAt.toISOString(),
  finished_at: iso(d.finishedAt),
});

export const withLog = (d: DeliveryWithAttempts) => ({
  ...publicDelivery(d),
  log: d.log.map((a) => ({
    attempt: a.attempt,
    started_at: a.startedAt.toISOString(),
    status_code: a.statusCode,
    error: a.error,
    latency_ms: a.latencyMs,
    request_body: a.requestBody,
    request_body_truncated: a.requestBodyTruncated,
    response_body: a.responseBody,
    response_body_truncated: a.responseBodyTruncated,
  })),
});

/** An event of the events list: its id (the webhook-id of its deliveries), type, time, and the payload as delivered. */
export const publicEvent = (e: StoredEvent) => ({
  event_id: e.id,
  type: e.type,
  created_at: e.createdAt.toISOString(),
  payload: JSON.parse(e.body) as Record<string, unknown>,
});
