import type { RequestHandler, Router } from 'express';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export interface HttpMetrics {
  registry: Registry;
  /** Counts and times every request, labelled by route pattern (never by raw path: ids would explode cardinality). */
  middleware: RequestHandler;
}

export function createHttpMetrics(service: string): HttpMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests by route, method and status.', labelNames: ['method', 'route', 'status'], registers: [registry] });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route, method and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  // one label object per (method, route, status), built once: the label sets are few and fixed
  const labelSets = new Map<string, { method: string; route: string; status: string }>();
  const labelsFor = (method: string, route: string, status: number) => {
    const key = `${method} ${status} ${route}`;
    let labels = labelSets.get(key);
    if (!labels) labelSets.set(key, (labels = { method, route, status: String(status) }));
    return labels;
  };
  const middleware: RequestHandler = (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = (req.route as { path?: unknown } | undefined)?.path;
      const labels = labelsFor(req.method, typeof route === 'string' ? route : 'unmatched', res.statusCode);
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
  return { registry, middleware };
}

/** GET /metrics in the Prometheus text format (admin port only). */
export function metricsRoute(router: Router, registry: Registry): void {
  router.get('/metrics', async (_req, res) => {
    res.set('Content-Type', registry.contentType).send(await registry.metrics());
  });
}
