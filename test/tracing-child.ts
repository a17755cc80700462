/**
 * Run as its own process by tracing.e2e.test.ts (instrumentation patches modules as Node's own loader
 * requires them, which Jest's module system bypasses): starts tracing with an in-memory exporter the way
 * a service's main.ts does, then the transactions service, sends one lookup with an unknown API key
 * (a database read, and a failure counted in the cache), and prints the finished spans as the last line.
 */
import { randomBytes } from 'node:crypto';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { shutdownTracing, startTracing } from '@attest/common/tracing';

async function main(): Promise<void> {
  const exporter = new InMemorySpanExporter();
  startTracing('transactions', {}, { exporter });
  // loaded only now, after the instrumentations are in place (as main.ts's first import does)
  const { startService } = await import('@attest/common');
  const { transactionsService } = await import('../services/transactions/src/main');
  const config = transactionsService.loadConfig(process.env);
  const service = await startService(transactionsService, config);
  const apiKey = `api_${Buffer.from(`key_${randomBytes(16).toString('hex')}:sk_${randomBytes(24).toString('hex')}`).toString('base64url')}`;
  const res = await fetch(
    `http://127.0.0.1:${config.TRANSACTIONS_PORT}/api/v2/client/transaction/0x${'ab'.repeat(32)}?app_id=app_${'0'.repeat(32)}&type=pay`,
    {
      headers: { authorization: `Bearer ${apiKey}`, 'x-request-id': process.env.TRACE_TEST_REQUEST_ID ?? 'none' },
    },
  );
  await res.text();
  await service.stop();
  const spans = exporter.getFinishedSpans().map((s) => ({
    name: s.name,
    scope: s.instrumentationScope.name,
    kind: s.kind,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId,
    attributes: s.attributes,
  }));
  await shutdownTracing();
  process.stdout.write(`${JSON.stringify({ status: res.status, spans })}\n`);
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  },
);
