import { randomBytes } from 'node:crypto';
import { freePort } from '../packages/common/test/support/throwaway';
import { freshDatabase, type FreshDatabase } from './fresh-database';
import { runTsx } from './support';

type SpanLine = {
  name: string;
  scope: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
};
const SERVER = 1;

describe('tracing (OpenTelemetry, in-memory exporter)', () => {
  let database: FreshDatabase;
  let result: { code: number | null; stdout: string; stderr: string };
  const requestId = `trace-test-${randomBytes(4).toString('hex')}`;
  const redis = process.env.TEST_REDIS_URL;

  beforeAll(async () => {
    database = await freshDatabase();
    const [port, adminPort] = [await freePort(), await freePort()];
    result = await runTsx('test/tracing-child.ts', [], {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...database.env,
      ...(redis ? { REDIS_URL: redis } : {}),
      TRANSACTIONS_PORT: String(port),
      TRANSACTIONS_ADMIN_PORT: String(adminPort),
      ADMIN_TOKEN: randomBytes(24).toString('base64url'),
      API_KEY_SECRET: randomBytes(32).toString('base64url'),
      KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
      LOG_LEVEL: 'info',
      TRACE_TEST_REQUEST_ID: requestId,
    });
  }, 120000);
  afterAll(() => database.drop());

  const output = () => {
    const lines = result.stdout.trim().split('\n');
    const last = JSON.parse(lines[lines.length - 1]) as { status: number; spans: SpanLine[] };
    const logs = lines.slice(0, -1).map((l) => JSON.parse(l) as Record<string, unknown>);
    return { ...last, logs };
  };
  const requestTrace = () => {
    const { spans } = output();
    const server = spans.find((s) => s.kind === SERVER && s.attributes.request_id === requestId);
    return { server, trace: spans.filter((s) => s.traceId === server?.traceId) };
  };

  it('follows one request from the HTTP server span through the express route', () => {
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(output().status).toBe(401);
    const { server, trace } = requestTrace();
    expect(server).toMatchObject({
      scope: '@opentelemetry/instrumentation-http',
      name: 'GET /api/v2/client/transaction/:transaction_id',
    });
    expect(server?.parentSpanId).toBeUndefined();
    const handler = trace.find(
      (s) => s.scope === '@opentelemetry/instrumentation-express' && s.attributes['express.type'] === 'request_handler',
    );
    expect(handler).toMatchObject({
      parentSpanId: server?.spanId,
      attributes: { 'http.route': '/api/v2/client/transaction/:transaction_id' },
    });
  });

  it('puts the database query of that request in the same trace (pg, also under embedded PGlite: it is reached through pg)', () => {
    const { trace } = requestTrace();
    const query = trace.find(
      (s) =>
        s.scope === '@opentelemetry/instrumentation-pg' && /FROM api_keys/.test(String(s.attributes['db.query.text'])),
    );
    const handler = trace.find((s) => s.attributes['express.type'] === 'request_handler');
    expect(query?.parentSpanId).toBe(handler?.spanId);
  });

  // embedded storage has an in-process cache, so no Redis client to trace: this part runs with TEST_REDIS_URL
  (redis ? it : it.skip)(
    `puts the cache commands of that request in the same trace (ioredis${redis ? '' : ': skipped, embedded storage has no Redis client'})`,
    () => {
      const { trace } = requestTrace();
      const cacheSpans = trace.filter((s) => s.scope === '@opentelemetry/instrumentation-ioredis');
      expect(cacheSpans.length).toBeGreaterThan(0);
    },
  );

  it('writes the trace id into the request log line: the request id and the trace id correlate logs and traces', () => {
    const { server } = requestTrace();
    const line = output().logs.find((l) => l.message === 'request' && l.request_id === requestId);
    expect(line).toMatchObject({ status: 401, trace_id: server?.traceId });
    expect(server?.traceId).toMatch(/^[0-9a-f]{32}$/);
  });
});
