import type { DeliveryStatus, WebhookDelivery, WebhookEndpoint } from './webhook-types';

/** The rows of webhook_endpoints and webhook_deliveries as read, and their domain form. */

export interface EndpointRow {
  id: string;
  app_id: string;
  url: string;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  description: string | null;
  enabled_events: string[] | null;
  consecutive_failures: number;
  failing_notified_at: Date | null;
  throttled_until: Date | null;
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  finished_at: Date | null;
}

export const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  appId: r.app_id,
  url: r.url,
  secretEnc: r.secret_enc,
  previousSecretEnc: r.previous_secret_enc,
  previousSecretExpiresAt: r.previous_secret_expires_at,
  createdAt: r.created_at,
  failingSince: r.failing_since,
  disabledAt: r.disabled_at,
  disabledReason: r.disabled_reason,
  description: r.description,
  enabledEvents: r.enabled_events,
  consecutiveFailures: r.consecutive_failures,
  failingNotifiedAt: r.failing_notified_at,
  throttledUntil: r.throttled_until,
});

export const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  eventId: r.event_id,
  eventType: r.event_type,
  endpointId: r.endpoint_id,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
});

// A delivery id from inside SQL, so fan-out and replay make them in one statement.
export const NEW_DELIVERY_ID = "'whd_' || replace(gen_random_uuid()::text, '-', '')";

export const DELIVERY_COLUMNS =
  'd.id, d.event_id, e.type AS event_type, d.endpoint_id, d.status, d.attempts, d.next_attempt_at, d.last_status_code, d.last_error, d.created_at, d.finished_at';
