/** The webhooks' domain types: endpoints, deliveries and their attempts, events as listed. */

export interface WebhookEndpoint {
  id: string;
  appId: string;
  url: string;
  secretEnc: string;
  previousSecretEnc: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  failingSince: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  description: string | null;
  /** The event types (or `family.*` wildcards) delivered to it; null: every type. */
  enabledEvents: string[] | null;
  /** Failed attempts in a row (throttling answers not counted). */
  consecutiveFailures: number;
  /** When this failing streak was reported (webhook_endpoint.failing); null while it was not. */
  failingNotifiedAt: Date | null;
  /** A 429/502/503/504 paused every delivery to it until then. */
  throttledUntil: Date | null;
}

/** An event as the events list answers it. */
export interface StoredEvent {
  id: string;
  type: string;
  body: string;
  createdAt: Date;
}

/** A place in the events list: after the event with this writing transaction id and sequence number. */
export interface EventCursor {
  tx: string;
  seq: string;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface WebhookAttempt {
  deliveryId: string;
  attempt: number;
  startedAt: Date;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  /** The body sent (the event's), its first LOG_BODY_LIMIT characters. */
  requestBody: string;
  requestBodyTruncated: boolean;
  /** The answer's first LOG_BODY_LIMIT bytes as text; null: no answer. */
  responseBody: string | null;
  responseBodyTruncated: boolean;
}

/** How much of each body the delivery log keeps and shows: 4096 (characters of the request, bytes of the answer). */
export const LOG_BODY_LIMIT = 4096;

/** A leased delivery with what the worker needs to send it. */
export interface DueDelivery {
  id: string;
  attempts: number;
  eventId: string;
  body: string;
  eventCreatedAt: Date;
  endpoint: WebhookEndpoint;
}

export interface AttemptRecord {
  delivery: DueDelivery;
  startedAt: Date;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  /** The answer's first LOG_BODY_LIMIT bytes, as text; null: no answer. */
  responseBody: string | null;
  responseBodyTruncated: boolean;
  /** pending: try again at nextAttemptAt; succeeded or failed: done. */
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  /** Disable the endpoint, for this reason. */
  disable: string | null;
  /** A throttling answer (429/502/503/504): pause the endpoint until then; not counted as a failure in a row. */
  throttleUntil: Date | null;
  /** Report the endpoint as failing after this many failed attempts in a row. */
  failingAfter: number;
}

/** What an attempt changed in its endpoint's health: it began failing (reported once per streak), or was disabled. */
export interface EndpointChange {
  failing: WebhookEndpoint | null;
  disabled: WebhookEndpoint | null;
}

/** Fields of an endpoint an update may change (undefined: unchanged). */
export interface EndpointPatch {
  url?: string;
  description?: string | null;
  enabledEvents?: string[] | null;
}

/** Where an event goes: every matching enabled endpoint of its app, but not `except`; or only to `only`. */
export interface EventRouting {
  only?: string;
  except?: string;
}
