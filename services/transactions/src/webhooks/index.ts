/**
 * Webhooks: apps' endpoints (app API and admin API), the event outbox every change writes to (writeEvent,
 * handed to the transactions and payment requests), the delivery worker and its retention purge, and the
 * events list (the pull path). Needs only the kernel.
 */
export { webhookActionsRoute, type WebhookActionsRouteDeps } from './webhook-actions-route';
export { webhookDeliveriesRoute, type WebhookDeliveriesRouteDeps } from './webhook-deliveries-route';
export { webhooksRoute, type WebhooksRouteDeps } from './webhooks-route';
export { eventsAdminRoute, eventsRoute, type EventsAdminDeps, type EventsRouteDeps } from './events-route';
export { webhookAdminRoutes, type WebhooksAdminDeps } from './webhooks-admin-routes';
export { deliveryAdminComponents, webhookAdminComponents, webhookPublicComponents } from './webhooks.openapi';
export { WebhookService } from './webhook-service';
export { webhookStore, writeEvent, type WebhookStore } from './webhook-store';
export { startDeliveryWorker, type DeliveryWorkerConfig } from './start-worker';
export { WebhookMetrics } from './webhook-metrics';
export { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from './webhook-schedule';
