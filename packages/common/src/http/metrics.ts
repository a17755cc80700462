import { documentRoute } from './api-registry';
import { textResponse } from './openapi';
import type { RequestHandler, Router } from 'express';
import { collectDefaultMetrics, Registry, type Metric } from 'prom-client';

/** Upper bounds of the request duration histogram, in seconds. */
export const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface Series {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  /** Per bucket (not cumulative); the last slot counts durations above the largest bound. */
  buckets: number[];
}

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/**
 * Request counts and durations by (method, route pattern, status), kept in plain objects found
 * through nested maps: recording a request allocates nothing and hashes no label set, which
 * prom-client's Counter and Histogram do on every call. The Prometheus text is built only when
 * /metrics is scraped, with the same names, labels and buckets those classes would write.
 */
export class RequestMetrics {
  private readonly series = new Map<string, Map<string, Map<number, Series>>>();

  record(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.series.get(route);
    if (!byMethod) this.series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      series = {
        labels: { method, route, status: String(status) },
        count: 0,
        sum: 0,
        buckets: new Array<number>(DURATION_BUCKETS.length + 1).fill(0),
      };
      byStatus.set(status, series);
    }
    series.count += 1;
    series.sum += seconds;
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    series.buckets[i]! += 1;
  }

  *all(): Generator<Series> {
    for (const byMethod of this.series.values()) for (const byStatus of byMethod.values()) yield* byStatus.values();
  }

  reset(): void {
    this.series.clear();
  }

  /** The two metrics, in the shape prom-client's registry reads from its own metric classes. */
  register(registry: Registry): void {
    const counter = {
      name: 'http_requests_total',
      help: 'HTTP requests by route, method and status.',
      type: 'counter',
      aggregator: 'sum',
      get: () => ({
        name: counter.name,
        help: counter.help,
        type: counter.type,
        aggregator: counter.aggregator,
        values: [...this.all()].map((s): MetricValue => ({ value: s.count, labels: s.labels })),
      }),
      reset: () => this.reset(),
    };
    const histogram = {
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by route, method and status.',
      type: 'histogram',
      aggregator: 'sum',
      get: () => {
        const values: MetricValue[] = [];
        for (const s of this.all()) {
          let cumulative = 0;
          DURATION_BUCKETS.forEach((le, i) => {
            cumulative += s.buckets[i]!;
            values.push({
              value: cumulative,
              labels: { le, ...s.labels },
              metricName: 'http_request_duration_seconds_bucket',
            });
          });
          values.push({
            value: s.count,
            labels: { le: '+Inf', ...s.labels },
            metricName: 'http_request_duration_seconds_bucket',
          });
          values.push({ value: s.sum, labels: s.labels, metricName: 'http_request_duration_seconds_sum' });
          values.push({ value: s.count, labels: s.labels, metricName: 'http_request_duration_seconds_count' });
        }
        return {
          name: histogram.name,
          help: histogram.help,
          type: histogram.type,
          aggregator: histogram.aggregator,
          values,
        };
      },
      reset: () => this.reset(),
    };
    // prom-client's registry takes any object with these members; its typings only name its own classes
    registry.registerMetric(counter as unknown as Metric);
    registry.registerMetric(histogram as unknown as Metric);
  }
}

export interface HttpMetrics {
  registry: Registry;
  requests: RequestMetrics;
}

export function createHttpMetrics(service: string): HttpMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const requests = new RequestMetrics();
  requests.register(registry);
  return { registry, requests };
}

/** The route pattern a request matched (never the raw path: ids would explode cardinality). */
export const routeLabel = (route: unknown): string => {
  const path = (route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : 'unmatched';
};

/** GET /metrics in the Prometheus text format (admin port only). */
export function metricsRoute(router: Router, registry: Registry): void {
  documentRoute(router, 'GET', '/metrics', {
    summary: 'Prometheus metrics: requests by route and status, latencies, the workers’ counters',
    tags: ['operations'],
    responses: { 200: textResponse('The Prometheus text exposition format', 'text/plain') },
  });
  router.get('/metrics', (async (_req, res) => {
    res.set('Content-Type', registry.contentType).send(await registry.metrics());
  }) as RequestHandler);
}
