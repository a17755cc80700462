import { Counter, Histogram, type Registry } from 'prom-client';

/** Delivery outcomes and lag per endpoint, on the admin port's /metrics. */
export class WebhookMetrics {
  readonly attempts = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by endpoint and outcome (success, failure, throttled: 429/502/503/504).',
    labelNames: ['endpoint_id', 'outcome'],
    registers: [],
  });
  readonly endpointReports = new Counter({
    name: 'webhook_endpoint_reports_total',
    help: 'Endpoints reported as failing (failed attempts in a row, or a delivery that gave up) or disabled, by endpoint and state.',
    labelNames: ['endpoint_id', 'state'],
    registers: [],
  });
  readonly lag = new Histogram({
    name: 'webhook_delivery_lag_seconds',
    help: 'From the change (the event) to its successful delivery, by endpoint.',
    labelNames: ['endpoint_id'],
    buckets: [0.1, 0.5, 1, 5, 30, 60, 300, 1800, 7200, 36000, 86400],
    registers: [],
  });

  register(registry: Registry): void {
    registry.registerMetric(this.attempts);
    registry.registerMetric(this.lag);
    registry.registerMetric(this.endpointReports);
  }
}
