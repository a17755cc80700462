// Imported first by main.ts: tracing (when OTEL_EXPORTER_OTLP_ENDPOINT is set) must start before express, pg and ioredis load.
import { startTracing } from '@attest/common/tracing';

startTracing('identity');
