import { eventBody, newMessageId, type PaymentRequestEventType, type WebhookEvent } from '../kernel/events';

/**
 * A payment_request.* event: `data` is the request as GET /api/v2/client/payment-requests/{id} answers it
 * (status, reason, amount_due, amount_paid, …), so a receiver needs no header to learn why.
 */
export function paymentRequestEvent(
  type: PaymentRequestEventType,
  request: { id: string; appId: string },
  data: Record<string, unknown>,
  at: Date,
): WebhookEvent {
  const body = eventBody(type, at, data);
  return { id: newMessageId(), appId: request.appId, type, transactionId: null, paymentRequestId: request.id, body };
}
