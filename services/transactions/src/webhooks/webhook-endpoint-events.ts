import { eventBody, newMessageId, type WebhookEvent } from '../kernel/events';
import { TEST_EVENT_TYPE, type EndpointEventType } from './webhook-filters';
import type { WebhookEndpoint } from './webhook-types';

/** The last attempt that made an endpoint failing or disabled. */
export interface LastAttempt {
  statusCode: number | null;
  error: string | null;
}

/**
 * `webhook_endpoint.failing` or `webhook_endpoint.disabled`, about one endpoint, for the app's other
 * endpoints and its events list: which endpoint, since when, why (the last answer), never its secret.
 */
export function endpointEvent(
  type: EndpointEventType,
  endpoint: WebhookEndpoint,
  last: LastAttempt,
  at = new Date(),
): WebhookEvent {
  const body = eventBody(type, at, {
    webhook_id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    failing_since: endpoint.failingSince?.toISOString() ?? null,
    consecutive_failures: endpoint.consecutiveFailures,
    disabled_at: endpoint.disabledAt?.toISOString() ?? null,
    disabled_reason: endpoint.disabledReason,
    last_status_code: last.statusCode,
    last_error: last.error,
  });
  return { id: newMessageId(), appId: endpoint.appId, type, transactionId: null, body };
}

/** The test event of `POST /api/v2/client/webhooks/{id}/test`: for that endpoint only, marked `"test": true`. */
export function testEvent(endpoint: WebhookEndpoint, at = new Date()): WebhookEvent {
  const body = eventBody(
    TEST_EVENT_TYPE,
    at,
    { webhook_id: endpoint.id, message: 'A test event from Attest: this endpoint receives and verifies events.' },
    { test: true },
  );
  return { id: newMessageId(), appId: endpoint.appId, type: TEST_EVENT_TYPE, transactionId: null, body };
}
