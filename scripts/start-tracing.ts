// Imported first by start.ts: tracing must start before express, pg and ioredis load.
import { startTracing } from '@attest/common/tracing';

startTracing('attest');
