/**
 * OpenTelemetry tracing: on when OTEL_EXPORTER_OTLP_ENDPOINT is set, off (nothing loaded) otherwise.
 *
 * Instrumentation patches express, pg and ioredis as they are required, so this module must run before
 * them: each service's main.ts imports its `tracing.ts` first, and this file imports nothing at run time
 * (`@attest/common/tracing` resolves here without loading the rest of the package). When tracing is off,
 * the SDK and the instrumentations are never required and `traceIdOfActiveSpan` returns at once.
 *
 * Correlation: the request log line carries `trace_id`, and each HTTP server span carries the request's
 * `request_id` (the X-Request-Id answered to the client) as an attribute.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { tracing } from '@opentelemetry/sdk-node';

export interface TracingOptions {
  /** Where spans go instead of the OTLP exporter the environment describes (tests: an in-memory exporter). */
  exporter?: tracing.SpanExporter;
}

export interface Tracing {
  /** Flushes and stops; spans that end later are dropped. */
  shutdown(): Promise<void>;
}

let started: Tracing | undefined;
let activeTraceId: () => string | undefined = () => undefined;

/** True when the environment asks for traces. */
export const tracingWanted = (env: NodeJS.ProcessEnv): boolean =>
  Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT) && env.OTEL_SDK_DISABLED !== 'true';

/** The trace id of the span this code runs in, when tracing is on; undefined otherwise (and at no cost). */
export const traceIdOfActiveSpan = (): string | undefined => activeTraceId();

/** True while tracing runs in this process (the fast path then leaves every request to Express, whose spans it records). */
export const tracingOn = (): boolean => started !== undefined;

/** Puts the request id the service answered with on the HTTP server span. */
function tagRequestId(span: Span, _request: unknown, response: IncomingMessage | ServerResponse): void {
  if (!('getHeader' in response)) return;
  const id = response.getHeader('x-request-id');
  if (typeof id === 'string') span.setAttribute('request_id', id);
}

/**
 * Starts the SDK with the http, express, pg and ioredis instrumentations, once per process (the first
 * caller names the service unless OTEL_SERVICE_NAME does). Returns undefined when tracing is off.
 */
export function startTracing(
  serviceName: string,
  env: NodeJS.ProcessEnv = process.env,
  options: TracingOptions = {},
): Tracing | undefined {
  if (started) return started;
  if (!options.exporter && !tracingWanted(env)) return undefined;
  /* eslint-disable @typescript-eslint/no-require-imports -- required only when tracing is on, and synchronously:
     the instrumentations must be registered before express, pg and ioredis are first required */
  const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const otel = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation } =
    require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } =
    require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const sdk = new otel.NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || serviceName,
    // traces only: metrics stay on /metrics (Prometheus) and logs on stdout
    logRecordProcessors: [],
    ...(options.exporter ? { spanProcessors: [new otel.tracing.SimpleSpanProcessor(options.exporter)] } : {}),
    instrumentations: [
      new HttpInstrumentation({ applyCustomAttributesOnSpan: tagRequestId }),
      new ExpressInstrumentation(),
      new PgInstrumentation(),
      new IORedisInstrumentation(),
    ],
  });
  sdk.start();
  activeTraceId = () => api.trace.getActiveSpan()?.spanContext().traceId;
  started = { shutdown: () => sdk.shutdown() };
  return started;
}

/**
 * Flushes the spans still buffered (on shutdown); nothing to do when tracing is off. An unreachable
 * collector loses those spans but never fails the process (a migrate step would otherwise exit non-zero).
 */
export async function shutdownTracing(): Promise<void> {
  const current = started;
  started = undefined;
  activeTraceId = () => undefined;
  await current?.shutdown().catch(() => undefined);
}
