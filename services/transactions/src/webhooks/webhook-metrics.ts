import { Histogram, type Registry } from 'prom-client';
import { counter, registerAll } from '../kernel/metrics';

/** Delivery outcomes and lag per endpoint, on the admin port's /metrics. */
export class WebhookMetrics {
  readonly attempts = counter(
    'webhook_delivery_attempts_total',
    'Webhook delivery attempts by endpoint and outcome (success, failure, throttled: 429/502/503/504).',
    ['endpoint_id', 'outcome'],
  );
  readonly endpointReports = counter(
    'webhook_endpoint_reports_total',
    'Endpoints reported as failing (failed attempts in a row, or a delivery that gave up) or disabled, by endpoint and state.',
    ['endpoint_id', 'state'],
  );
  readonly lag = new Histogram({
    name: 'webhook_delivery_lag_seconds',
    help: 'From the change (the event) to its successful delivery, by endpoint.',
    labelNames: ['endpoint_id'],
    buckets: [0.1, 0.5, 1, 5, 30, 60, 300, 1800, 7200, 36000, 86400],
    registers: [],
  });

  register(registry: Registry): void {
    registerAll(registry, [this.attempts, this.lag, this.endpointReports]);
  }
}
